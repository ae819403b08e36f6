// Whether a message's body shows any text yet, and the waiting indicator of a streaming answer that has
// none (no text, no reasoning). Reads the body (blocks, tail, reasoning) and toggles two classes and
// the indicator; it builds nothing and never changes the body itself.

/** Whether the body shows any text yet (a committed block or the tail). */
function hasText(el) {
  const blocks = el.querySelector('.message-blocks');
  const tail = el.querySelector('.message-tail');
  // A question's text is plain, in the tail element (setPlainText), not in the tail's state.
  return blocks.childNodes.length > 0 || (el.tailState ? el.tailState.text !== '' : false) || tail.textContent !== '';
}

/**
 * A streaming answer with nothing to show yet (no text, no reasoning) waits for the model: it shows
 * the waiting indicator instead of an empty card, and no actions. A message without text has no Copy.
 */
export function syncBody(el) {
  const text = hasText(el);
  const waiting = el.classList.contains('is-streaming') && !text && !el.querySelector(':scope > .reasoning');
  el.classList.toggle('has-no-text', !text);
  if (el.classList.contains('is-waiting') === waiting) return;
  el.classList.toggle('is-waiting', waiting);
  el.querySelector('.message-waiting').hidden = !waiting;
}
