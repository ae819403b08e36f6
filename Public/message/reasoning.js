// A message's reasoning ("thinking"): plain text above the answer, never parsed as HTML or Markdown,
// in a box made on first use, open while the model thinks and closed once the answer shows (unless
// the person opened or closed it by hand). view.js re-exports these for the message element.

const THINKING_LABEL = 'Thinking…';
const THOUGHT_LABEL = 'Thought process';

/** The reasoning box, made on first use: a message without reasoning has none at all. */
function reasoningBox(el, create) {
  let box = el.querySelector(':scope > .reasoning');
  if (box || !create) return box;
  box = document.createElement('details');
  box.className = 'reasoning';
  const summary = document.createElement('summary');
  summary.className = 'reasoning-summary';
  summary.textContent = THOUGHT_LABEL;
  const body = document.createElement('div');
  body.className = 'reasoning-text';
  body.tabIndex = 0; // it scrolls (max-height): keyboard users need to reach it (axe scrollable-region-focusable)
  // One text node that grows with appendData: a streamed token costs no re-parse and no copy of
  // everything before it.
  box.textNode = document.createTextNode('');
  body.append(box.textNode);
  box.append(summary, body);
  // Opening or closing by hand (mouse, or Enter/Space on the summary, which also fire click) wins over
  // the automatic open-while-thinking, close-when-answering.
  summary.addEventListener('click', () => { box.setByHand = true; });
  box.setByHand = false;
  el.querySelector('.message-body').before(box);
  return box;
}

/** `snapshot`, history, stop and reconcile: the whole reasoning so far; `""` removes the box.
 *  Anything but a string (a server without reasoning) leaves what is shown. */
export function setReasoning(el, text) {
  if (typeof text !== 'string') return;
  const box = reasoningBox(el, text !== '');
  if (!box) return;
  if (text === '') {
    box.remove();
    return;
  }
  if (box.textNode.data !== text) box.textNode.data = text;
  syncReasoning(el);
}

/** `reasoning`: text appended to what is shown. */
export function appendReasoning(el, text) {
  if (typeof text !== 'string' || text === '') return;
  const box = reasoningBox(el, true);
  box.textNode.appendData(text);
  syncReasoning(el);
}

/** The reasoning shown now ('' without a box), to compare with the stored message. */
export function shownReasoning(el) {
  const box = reasoningBox(el, false);
  return box ? box.textNode.data : '';
}

function hasAnswerText(el) {
  const blocks = el.querySelector('.message-blocks');
  const tail = el.querySelector('.message-tail');
  return blocks.firstChild !== null || !tail.hidden || (el.tailState && el.tailState.code !== null);
}

/**
 * Summary and open state from what the message shows: while it streams without answer text the
 * box is open and says "Thinking…"; once answer text is there it closes (unless set by hand).
 * Cheap enough for every `tail` event: it only writes what changed.
 */
export function syncReasoning(el) {
  const box = reasoningBox(el, false);
  if (!box) return;
  const answered = hasAnswerText(el);
  const thinking = el.classList.contains('is-streaming') && !answered;
  const label = thinking ? THINKING_LABEL : THOUGHT_LABEL;
  const summary = box.firstElementChild;
  if (summary.textContent !== label) summary.textContent = label;
  box.classList.toggle('is-thinking', thinking);
  if (box.setByHand) return;
  // A reply stopped before its answer keeps the box as it was (open if it was being watched).
  if (thinking && !box.open) box.open = true;
  else if (answered && box.open) box.open = false;
}
