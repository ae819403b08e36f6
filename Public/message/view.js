// One message element: built from the template, its body set from the server's HTML (a whole finished
// body, or committed blocks as they stream), its header (role, status, versions, which actions apply)
// and its inline error. The door to a message element: the streaming tail (message-tail.js), the
// server's HTML treatment (server-html.js), the waiting indicator (message-waiting.js) and the reasoning
// (reasoning.js) are re-exported from here; a question's attached files are attachments/message-files.js.
// It builds DOM only: no requests, no model. All presentation is classes and the `hidden` attribute
// (strict CSP).
import { setReasoning, syncReasoning } from './reasoning.js';
import { showTime } from '../shared/times.js';
import { enhance, fragmentFrom } from './server-html.js';
import { setTail, setTailHTML, tailShowsCode } from './message-tail.js';
import { syncBody } from './message-waiting.js';
import { blockElement, findBlock, findCard, partsFragment, partsHaveCalls, setParts } from './reply-body.js';
import { showMessageFiles } from '../attachments/message-files.js';
import { actionPart, showActionTurn } from '../surfaces/action-turn.js';

export { setReasoning, appendReasoning, shownReasoning, syncReasoning } from './reasoning.js';
export { enhance } from './server-html.js';
export { setTail, appendTail, setTailHTML } from './message-tail.js';
export { syncBody } from './message-waiting.js';
export { putToolCard, refreshToolCards, partsHaveCalls, setParts, showStoredParts } from './reply-body.js';

const template = document.getElementById('message-template');

const STATUS_LABELS = {
  streaming: 'Streaming…',
  stopped: 'Stopped',
  failed: 'Failed',
  interrupted: 'Interrupted',
  awaiting_approval: 'Waiting for approval',
};

function bodyOf(el) {
  return {
    blocks: el.querySelector('.message-blocks'),
    tail: el.querySelector('.message-tail'),
  };
}

/** `titleOf(toolId)`: a tool's title for its cards ('' when unknown: the card shows the id). */
export function createMessageElement(message, titleOf = null) {
  const el = template.content.firstElementChild.cloneNode(true);
  el.dataset.id = message.id;
  updateMeta(el, message);
  if (message.role !== 'assistant') {
    // What people typed is shown exactly as typed (issue 18): plain text, never Markdown.
    setPlainText(el, message.content || '');
    // A turn made by a surface's Button (issue 22) shows what was chosen, not the JSON.
    showActionTurn(el, message.parts);
  } else if (message.status !== 'streaming' && partsHaveCalls(message.parts)) {
    setParts(el, message.parts, titleOf);
  } else if (typeof message.html === 'string' && message.status !== 'streaming') {
    setHTML(el, message.html);
  } else if (message.status !== 'streaming') {
    setPlainText(el, message.content || '');
  } else {
    // A running answer: its body comes from the stream's snapshot.
    setPlainText(el, '');
  }
  // A running answer's reasoning also comes from the snapshot; a finished one starts collapsed.
  if (message.status !== 'streaming') setReasoning(el, message.reasoning);
  // Attached files (issue 21): a question's images and documents, above its text.
  showMessageFiles(el, message.parts);
  return el;
}

/** Whole finished body (from GET): one parse, no block wrappers. */
export function setHTML(el, html) {
  const { blocks } = bodyOf(el);
  const fragment = fragmentFrom(html);
  enhance(fragment);
  blocks.replaceChildren(fragment);
  blocks.sourceHTML = html;
  setTail(el, '');
  setTailHTML(el, null);
}

/** Text exactly as given (what a user typed): every space, blank line and marker kept (pre-wrap). */
function setPlainText(el, text) {
  const { blocks, tail } = bodyOf(el);
  blocks.replaceChildren();
  blocks.sourceHTML = null;
  setTail(el, '');
  setTailHTML(el, null);
  tail.textContent = text;
  tail.hidden = text === '';
  syncBody(el);
}

/** `snapshot`: replaces the whole body; `tailHTML` is its provisional tail (null: none). With tool
 *  calls in `replyParts`, the body walks them: each text part's blocks, each call's card. */
export function setBlocks(el, htmlBlocks, tailText, tailHTML = null, replyParts = null, titleOf = null) {
  const { blocks } = bodyOf(el);
  let fragment;
  if (partsHaveCalls(replyParts)) {
    fragment = partsFragment(el, replyParts, { blocks: htmlBlocks, titleOf }).fragment;
  } else {
    fragment = document.createDocumentFragment();
    htmlBlocks.forEach((html, index) => fragment.append(blockElement(index, html)));
  }
  // A card holding the focus (a decision just made) keeps it when the snapshot draws it again.
  const active = document.activeElement;
  const focused = active && blocks.contains(active) ? active.closest('.tool-card') : null;
  blocks.replaceChildren(fragment);
  const again = focused ? findCard(el, focused.dataset.callId) : null;
  if (again) {
    again.tabIndex = -1;
    again.focus({ preventScroll: true });
  }
  blocks.sourceHTML = null;
  setTail(el, tailText);
  setTailHTML(el, tailHTML);
}

/** `block`: appends a committed block (or replaces one with the same index). */
export function putBlock(el, index, html) {
  const { blocks } = bodyOf(el);
  blocks.sourceHTML = null;
  // A commit moves the tail's start: the `tail` that follows replaces it. An open fence shown as
  // code was this block, which now takes its place (same frame, same spot: no jump).
  if (tailShowsCode(el)) setTail(el, '');
  // Tool cards sit among the blocks (reply-body.js): a block is found by its index, not its place.
  const existing = findBlock(blocks, index);
  if (existing) {
    if (existing.sourceHTML !== html) existing.replaceWith(blockElement(index, html));
  } else {
    blocks.append(blockElement(index, html));
  }
  syncBody(el);
}

/** `done.patch`: replaces already shown blocks in place; unknown indexes are appended. */
export function applyPatch(el, patch) {
  for (const item of patch || []) putBlock(el, item.index, item.html);
}

/** The HTML now shown (block sources joined), to compare with the stored message. */
export function shownHTML(el) {
  const { blocks } = bodyOf(el);
  if (typeof blocks.sourceHTML === 'string') return blocks.sourceHTML;
  const list = blocks.querySelectorAll(':scope > .block');
  const cards = blocks.querySelectorAll(':scope > .tool-card, :scope > .surface-host').length;
  if (list.length + cards !== blocks.children.length) return null;
  return Array.from(list, (block) => block.sourceHTML).join('');
}

export function blockCount(el) {
  return bodyOf(el).blocks.querySelectorAll(':scope > .block').length;
}

/** Role, status badge, error, branch switcher and which actions apply. */
export function updateMeta(el, message) {
  const isUser = message.role === 'user';
  el.classList.toggle('role-user', isUser);
  el.classList.toggle('role-assistant', !isUser);
  el.dataset.status = message.status || 'complete';
  el.setAttribute('aria-label', isUser ? 'Your message' : 'Assistant message');
  el.querySelector('.message-role').textContent = isUser ? 'You' : 'Assistant';
  showTime(el.querySelector('.message-time'), message.created_at);
  el.querySelector('.message-model').textContent = !isUser && message.model ? message.model : '';

  const status = el.querySelector('.message-status');
  let label = STATUS_LABELS[message.status] || '';
  if (!label && message.finish_reason === 'length') label = 'Truncated';
  status.textContent = label;
  status.hidden = label === '';

  const streaming = message.status === 'streaming';
  el.classList.toggle('is-streaming', streaming);
  if (streaming) el.setAttribute('aria-busy', 'true');
  else el.removeAttribute('aria-busy');

  const siblings = message.siblings;
  const branch = el.querySelector('.branch');
  if (siblings && siblings.count > 1) {
    branch.hidden = false;
    branch.querySelector('.branch-position').textContent = `${siblings.index + 1} / ${siblings.count}`;
    branch.querySelector('[data-action="prev"]').disabled = siblings.index <= 0;
    branch.querySelector('[data-action="next"]').disabled = siblings.index >= siblings.count - 1;
  } else {
    branch.hidden = true;
  }

  el.querySelector('[data-action="edit"]').hidden = !isUser || message.local === true || actionPart(message.parts) !== null;
  // A failed reply offers one way forward, the Retry of its error (a regenerate): not Regenerate
  // beside it, nor Copy of a reply with no text.
  const failed = message.status === 'failed';
  el.querySelector('[data-action="regenerate"]').hidden = isUser || streaming || failed;
  const continuable = !isUser && !streaming &&
    (message.status === 'stopped' || message.status === 'interrupted' || message.finish_reason === 'length');
  el.querySelector('[data-action="continue"]').hidden = !continuable;
  el.querySelector('[data-action="copy"]').hidden = message.local === true || (failed && !message.content);
  // Fork copies stored, finished messages: the server refuses (409) one that streams.
  el.querySelector('[data-action="fork"]').hidden = streaming || message.local === true;
  // Streaming or not decides the reasoning's label ("Thinking…" only while it runs).
  syncReasoning(el);
  syncBody(el);
}

export function setStatusText(el, text) {
  const status = el.querySelector('.message-status');
  status.textContent = text;
  status.hidden = text === '';
}

/** Shows an error inline on the message; `retry` (a function) makes the Retry button work. */
export function showError(el, text, retry) {
  const box = el.querySelector('.message-error');
  box.querySelector('.message-error-text').textContent = text;
  box.querySelector('[data-action="retry"]').hidden = !retry;
  el.retry = retry || null;
  box.hidden = false;
}

export function clearError(el) {
  el.querySelector('.message-error').hidden = true;
  el.retry = null;
}

export function errorText(error) {
  if (!error) return 'The answer failed.';
  const code = error.code ? ` (${error.code})` : '';
  return `${error.message || 'The answer failed.'}${code}`;
}
