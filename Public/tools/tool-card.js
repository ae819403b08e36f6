// One tool call's card in a reply: the tool's title, its status (a spinner while it runs), its arguments
// (pretty JSON once they parse, raw text until then; collapsible), Approve / Deny and "Always allow this
// tool" while it waits for the person, and its result. A view: it builds DOM from a call part
// (tools/tool-parts.js) and raises intents through the message list's delegated `data-action` buttons
// (`tool-approve`, `tool-deny`). Everything a tool or a model wrote goes in as text (textContent), never
// as HTML; a result's images are the server's URL (the page's CSP allows only 'self' images).
import { argumentsText, awaitsDecision, RUNNING_STATUSES } from './tool-parts.js';

/** The built-in tool that draws interactive answers (issue 22). */
const RENDER_UI = 'parley/render_ui';

const STATUS_WORDS = {
  streaming: 'Preparing the call…',
  awaiting_approval: 'Waiting for your approval',
  running: 'Running…',
  complete: 'Done',
  error: 'Failed',
  denied: 'Denied',
  cancelled: 'Cancelled',
};

/** The URL of content item `index` of a call's result (an image). */
export function contentURL(messageId, callId, index) {
  const enc = encodeURIComponent;
  return `/api/messages/${enc(messageId)}/tool_calls/${enc(callId)}/content/${index}`;
}

function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A `<pre>` of text that may scroll: keyboard users reach it (axe scrollable-region-focusable). */
function textBox(className, text) {
  const pre = make('pre', className, text);
  pre.tabIndex = 0;
  return pre;
}

/** The card for `part`; `view` is {messageId, title} (title: the tool's, or its id). */
export function createToolCard(part, view) {
  const card = make('div', 'tool-card');
  card.setAttribute('role', 'group');
  card.dataset.callId = part.id;
  const head = make('div', 'tool-card-head');
  const icon = make('span', 'tool-card-icon', '⚙');
  icon.setAttribute('aria-hidden', 'true');
  const status = make('span', 'tool-card-status');
  const spinner = make('span', 'tool-spinner');
  spinner.setAttribute('aria-hidden', 'true');
  status.append(spinner, make('span', 'tool-card-status-text'));
  head.append(icon, make('span', 'tool-card-title'), status);

  const args = make('details', 'tool-card-arguments');
  const summary = make('summary', 'tool-card-arguments-summary', 'Arguments');
  summary.addEventListener('click', () => { args.setByHand = true; });
  args.append(summary, textBox('tool-card-arguments-text', ''));
  // The arguments of parley/render_ui are the interactive answer drawn below the card: closed.
  args.open = (part.status === 'streaming' && part.tool !== RENDER_UI) || part.status === 'awaiting_approval';

  const approval = make('div', 'tool-card-approval');
  const approve = make('button', 'button primary small', 'Approve');
  approve.type = 'button';
  approve.dataset.action = 'tool-approve';
  const deny = make('button', 'button small', 'Deny');
  deny.type = 'button';
  deny.dataset.action = 'tool-deny';
  const remember = make('label', 'tool-card-remember');
  const box = make('input', 'tool-card-remember-box');
  box.type = 'checkbox';
  remember.append(box, document.createTextNode(' Always allow this tool'));
  approval.append(make('span', 'tool-card-question', 'Run this tool?'), approve, deny, remember);

  const result = make('div', 'tool-card-result');
  card.append(head, args, approval, result);
  updateToolCard(card, part, view);
  return card;
}

/** Shows `part` on its card: only what changed is written (a delta costs the arguments' text). */
export function updateToolCard(card, part, view) {
  const title = view.title || part.tool || part.name || 'Tool';
  const titleEl = card.querySelector('.tool-card-title');
  if (titleEl.textContent !== title) {
    titleEl.textContent = title;
    card.setAttribute('aria-label', `Tool call: ${title}`);
    card.querySelector('[data-action="tool-approve"]').setAttribute('aria-label', `Approve ${title}`);
    card.querySelector('[data-action="tool-deny"]').setAttribute('aria-label', `Deny ${title}`);
  }
  const before = card.dataset.status;
  const failed = part.status === 'error' || Boolean(part.result && part.result.is_error);
  card.dataset.status = part.status;
  card.classList.toggle('is-running', RUNNING_STATUSES.has(part.status));
  card.classList.toggle('is-error', failed);
  card.classList.toggle('is-stopped', part.status === 'denied' || part.status === 'cancelled');
  let words = STATUS_WORDS[part.status] || part.status;
  if (part.status === 'awaiting_approval' && part.decision === 'approve') words = 'Approved; waiting for the other calls';
  if (part.status === 'complete' && failed) words = 'Failed';
  // Until its first complete tree arrives, the interactive answer is this card's words (no half tree).
  if (part.status === 'streaming' && part.tool === RENDER_UI) words = 'Drawing an interactive answer…';
  const statusText = card.querySelector('.tool-card-status-text');
  if (statusText.textContent !== words) statusText.textContent = words;

  const args = card.querySelector('.tool-card-arguments');
  const text = argumentsText(part);
  const argsBox = args.querySelector('.tool-card-arguments-text');
  if (argsBox.textContent !== text) argsBox.textContent = text;
  args.hidden = text === '' && !RUNNING_STATUSES.has(part.status);
  // Open while they stream and while the person decides; closed once the call has its outcome.
  if (before !== part.status && !args.setByHand && before !== undefined) {
    if (part.status === 'awaiting_approval') args.open = true;
    else if (!RUNNING_STATUSES.has(part.status)) args.open = false;
  }

  const approval = card.querySelector('.tool-card-approval');
  const asking = awaitsDecision(part);
  if (approval.hidden === asking) approval.hidden = !asking;
  if (!asking) setDeciding(card, false);
  showResult(card, part, view, title);
}

/** After Approve or Deny: the buttons are disabled until the server answers (`on` false: enabled). */
export function setDeciding(card, on) {
  for (const control of card.querySelectorAll('.tool-card-approval button, .tool-card-approval input')) control.disabled = on;
  card.classList.toggle('is-deciding', on);
}

/** Whether "Always allow this tool" is ticked on `card`. */
export function remembers(card) {
  const box = card.querySelector('.tool-card-remember-box');
  return Boolean(box && box.checked);
}

function showResult(card, part, view, title) {
  const box = card.querySelector('.tool-card-result');
  // What render_ui answers the model ("drawn: …") is for the model; the surface shows the outcome.
  if (part.tool === RENDER_UI && part.result && !part.result.is_error && !renderErrors(part.result)) {
    box.replaceChildren();
    box.shownKey = null;
    box.hidden = true;
    return;
  }
  const key = JSON.stringify([part.result ?? null, part.status]);
  if (box.shownKey === key) return;
  box.shownKey = key;
  const result = part.result;
  const children = [];
  if (result) {
    children.push(make('p', 'tool-card-result-label', result.is_error ? 'Error' : 'Result'));
    const items = Array.isArray(result.content) ? result.content : [];
    const structured = result.structured_content ?? null;
    items.forEach((item, index) => {
      // MCP servers repeat structured content as a text item: shown once, formatted.
      if (!repeats(item, structured)) children.push(contentItem(item, index, part, view, title));
    });
    if (structured !== null) {
      children.push(make('p', 'tool-card-result-label', 'Structured content'));
      children.push(textBox('tool-card-json', JSON.stringify(result.structured_content, null, 2)));
    }
    if (children.length === 1) children.push(make('p', 'tool-card-empty', 'No output.'));
  } else if (part.status === 'denied') {
    children.push(make('p', 'tool-card-note', 'You denied this call: the tool did not run.'));
  } else if (part.status === 'cancelled') {
    children.push(make('p', 'tool-card-note', 'The call was cancelled before it finished.'));
  }
  box.replaceChildren(...children);
  box.hidden = children.length === 0;
}

/** Whether render_ui's `result` names validation errors (its structured content's `errors`). */
function renderErrors(result) {
  const errors = result.structured_content && result.structured_content.errors;
  return Array.isArray(errors) && errors.length > 0;
}

/** Whether content `item` is the text of `structured` (the same JSON). */
function repeats(item, structured) {
  if (structured === null || !item || item.type !== 'text' || typeof item.text !== 'string') return false;
  try {
    return JSON.stringify(JSON.parse(item.text)) === JSON.stringify(structured);
  } catch {
    return false;
  }
}

/** One MCP content item: text as text, an image through the server's URL, anything else named. */
function contentItem(item, index, part, view, title) {
  const type = item && item.type;
  if (type === 'text') return textBox('tool-card-text', String(item.text ?? ''));
  if (type === 'image') {
    const image = make('img', 'tool-card-image');
    image.src = contentURL(view.messageId, part.id, index);
    image.alt = `Image ${index + 1} from ${title}`;
    image.loading = 'lazy';
    return image;
  }
  const resource = item && item.resource;
  if (type === 'resource' && resource && typeof resource.text === 'string') {
    return textBox('tool-card-text', resource.text);
  }
  const uri = (resource && resource.uri) || (item && item.uri) || '';
  return make('p', 'tool-card-note', `${type || 'Unknown'} content${uri ? `: ${uri}` : ''} (not shown)`);
}
