// Message elements. Server HTML is inserted once per block and never re-rendered unless it changed;
// the open tail is shown as the server rendered it provisionally (`tail_html`), else as plain text, and
// an open code fence at its start is shown as a code block while it streams. All presentation is
// classes and the `hidden` attribute (strict CSP).

import { setReasoning, syncReasoning } from './reasoning.js';
import { highlightLater } from './highlight.js';
import { showTime } from './times.js';

export { setReasoning, appendReasoning, shownReasoning, syncReasoning } from './reasoning.js';

const template = document.getElementById('message-template');

const STATUS_LABELS = {
  streaming: 'Streaming…',
  stopped: 'Stopped',
  failed: 'Failed',
  interrupted: 'Interrupted',
};

/** Parses trusted, server-sanitised HTML into a fragment (no layout, nothing executes). */
function fragmentFrom(html) {
  const holder = document.createElement('template');
  holder.innerHTML = html;
  return holder.content;
}

/** The frame of a code block: its head (language label, copy button); the `<pre>` goes after it. */
function codeBox(language) {
  const box = document.createElement('div');
  box.className = 'codeblock';
  const head = document.createElement('div');
  head.className = 'codeblock-head';
  const label = document.createElement('span');
  label.className = 'codeblock-language';
  label.textContent = language || 'text';
  const copy = document.createElement('button');
  copy.type = 'button';
  copy.className = 'button small';
  copy.dataset.action = 'copy-code';
  copy.textContent = 'Copy code';
  copy.setAttribute('aria-label', language ? `Copy ${language} code` : 'Copy code');
  head.append(label, copy);
  box.append(head);
  return box;
}

/** Adds a language label and a copy button to code blocks (highlighted soon after: highlight.js),
 *  and makes links open outside the app. Only committed HTML comes here, never the streaming tail. */
export function enhance(root) {
  for (const pre of root.querySelectorAll('pre')) {
    if (pre.classList.contains('message-tail') || (pre.parentElement && pre.parentElement.classList.contains('codeblock'))) continue;
    const code = pre.querySelector('code');
    let language = '';
    if (code) {
      for (const name of code.classList) {
        if (name.startsWith('language-')) language = name.slice('language-'.length);
      }
    }
    const box = codeBox(language);
    pre.replaceWith(box);
    box.append(pre);
    pre.tabIndex = 0; // a long line scrolls it sideways: keyboard users need to reach it (axe scrollable-region-focusable)
    if (code) highlightLater(code);
  }
  for (const table of root.querySelectorAll('table')) table.tabIndex = 0; // scrolls sideways too (app.css)
  for (const link of root.querySelectorAll('a[href^="http://"], a[href^="https://"]')) {
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
  }
}

function blockElement(index, html) {
  const block = document.createElement('div');
  block.className = 'block';
  block.dataset.index = String(index);
  block.sourceHTML = html;
  block.append(fragmentFrom(html));
  enhance(block);
  return block;
}

function parts(el) {
  return {
    blocks: el.querySelector('.message-blocks'),
    tail: el.querySelector('.message-tail'),
  };
}

export function createMessageElement(message) {
  const el = template.content.firstElementChild.cloneNode(true);
  el.dataset.id = message.id;
  updateMeta(el, message);
  if (message.role !== 'assistant') {
    // What people typed is shown exactly as typed (issue 18): plain text, never Markdown.
    setPlainText(el, message.content || '');
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
  return el;
}

/** Whole finished body (from GET): one parse, no block wrappers. */
export function setHTML(el, html) {
  const { blocks } = parts(el);
  const fragment = fragmentFrom(html);
  enhance(fragment);
  blocks.replaceChildren(fragment);
  blocks.sourceHTML = html;
  setTail(el, '');
  setTailHTML(el, null);
}

/** Text exactly as given (what a user typed): every space, blank line and marker kept (pre-wrap). */
function setPlainText(el, text) {
  const { blocks, tail } = parts(el);
  blocks.replaceChildren();
  blocks.sourceHTML = null;
  setTail(el, '');
  setTailHTML(el, null);
  tail.textContent = text;
  tail.hidden = text === '';
  syncBody(el);
}

/** `snapshot`: replaces the whole body; `tailHTML` is its provisional tail (null: none). */
export function setBlocks(el, htmlBlocks, tailText, tailHTML = null) {
  const { blocks } = parts(el);
  const fragment = document.createDocumentFragment();
  htmlBlocks.forEach((html, index) => fragment.append(blockElement(index, html)));
  blocks.replaceChildren(fragment);
  blocks.sourceHTML = null;
  setTail(el, tailText);
  setTailHTML(el, tailHTML);
}

/** `block`: appends a committed block (or replaces one with the same index). */
export function putBlock(el, index, html) {
  const { blocks } = parts(el);
  blocks.sourceHTML = null;
  // A commit moves the tail's start: the `tail` that follows replaces it. An open fence shown as
  // code was this block, which now takes its place (same frame, same spot: no jump).
  const state = el.tailState;
  if (state && state.code) setTail(el, '');
  const existing = blocks.children[index];
  if (existing && existing.classList.contains('block') && existing.dataset.index === String(index)) {
    if (existing.sourceHTML !== html) existing.replaceWith(blockElement(index, html));
  } else {
    blocks.append(blockElement(index, html));
  }
  syncBody(el);
}

// MARK: - Waiting for the first text

/** Whether the body shows any text yet (a committed block or the tail). */
function hasText(el) {
  const { blocks, tail } = parts(el);
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

// MARK: - Tail: the raw open end of a streaming answer.
// Kept as text on the element (`el.tailState`); shown raw in `.message-tail`, one text node that
// grows with appendData, except an open code fence at its start, which is shown as a code block:
// its complete lines go into the `<pre>` as text, in chunks of CODE_CHUNK_LINES lines, each a block
// holding a `<code>` (so an append lays out one chunk, not the whole block, and every line box is
// built as in the committed `<pre><code>`: same height, no jump when it replaces the view).

const CODE_CHUNK_LINES = 64;
/** Blank lines, then an opening fence: up to 3 spaces, 3+ backticks or tildes, the info string. */
const OPENING_FENCE = /^(?:[ \t]*\n)*( {0,3})(`{3,}|~{3,})([^\n]*)\n/;
/** Blank lines, then one complete line that is not blank: enough to know whether the tail opens a
 *  fence (a tail of blank lines alone decides nothing: the fence may come next). */
const FIRST_LINE = /^(?:[ \t]*\n)*[ \t]*\S[^\n]*\n/;

/** Leading blank lines and spaces of the raw tail are not shown (cmark drops them too). */
const LEADING_SPACE = /^\s+/;

function tailState(el) {
  if (!el.tailState) el.tailState = { text: '', raw: null, code: null, decided: false, html: null };
  return el.tailState;
}

/** `tail`, snapshot and reconcile: the raw open end, replaced as a whole. */
export function setTail(el, text) {
  const state = tailState(el);
  state.text = text;
  state.decided = false;
  state.code = null;
  const { tail } = parts(el);
  state.raw = document.createTextNode(text.replace(LEADING_SPACE, ''));
  tail.replaceChildren(state.raw);
  decideTail(el, state);
  syncBody(el);
}

/** `tail_append`: raw text added to the end of the tail. */
export function appendTail(el, text) {
  if (typeof text !== 'string' || text === '') return;
  const state = tailState(el);
  state.text += text;
  if (state.code) {
    appendCode(el, state, text);
  } else {
    state.raw.appendData(state.raw.data === '' ? text.replace(LEADING_SPACE, '') : text);
    if (!state.decided) decideTail(el, state);
  }
  showTail(el, state);
  if (el.classList.contains('has-no-text')) syncBody(el);
}

/**
 * `tail_html` (issue 18): the open tail as the server rendered it, shown in place of the raw tail, so
 * what streams looks like what it becomes. The new HTML is the first `keep` UTF-16 units of the one
 * before, then `html`; null: none (an open code fence, or a tail past the server's limit), and the raw
 * tail shows. Each replaces the one before; the committed blocks never hold it.
 */
export function setTailHTML(el, html, keep = 0) {
  const state = tailState(el);
  let box = el.querySelector('.message-tail-html');
  if (typeof html !== 'string') {
    state.html = null;
    if (box) box.remove();
  } else {
    state.html = (keep > 0 && state.html ? state.html.slice(0, keep) : '') + html;
    if (!box) {
      box = document.createElement('div');
      box.className = 'message-tail-html';
      parts(el).tail.before(box);
    }
    const fragment = fragmentFrom(state.html);
    enhance(fragment);
    box.replaceChildren(fragment);
  }
  showTail(el, state);
}

/** Whether the tail opens a code fence (once its first line is complete) and shows it accordingly. */
function decideTail(el, state) {
  const fence = OPENING_FENCE.exec(state.text);
  // A backtick fence's info string has no backtick (` ``` a`b ` is inline code, not a fence).
  if (fence && !(fence[2][0] === '`' && fence[3].includes('`'))) {
    state.decided = true;
    openCode(el, state, fence);
  } else {
    state.decided = FIRST_LINE.test(state.text);
  }
  showTail(el, state);
}

function openCode(el, state, fence) {
  const language = fence[3].trim().split(/\s/)[0] || '';
  const box = codeBox(language);
  box.classList.add('message-tail-code');
  const pre = document.createElement('pre');
  pre.tabIndex = 0; // as in enhance()
  box.append(pre);
  const old = el.querySelector('.message-tail-code');
  if (old) old.replaceWith(box);
  else parts(el).tail.before(box);
  state.code = {
    box, pre, language, chunk: null, lines: CODE_CHUNK_LINES, partial: '',
    indent: fence[1].length ? new RegExp(`^ {1,${fence[1].length}}`) : null,
    closing: new RegExp(`^ {0,3}\\${fence[2][0]}{${fence[2].length},}[ \t]*$`),
  };
  appendCode(el, state, state.text.slice(fence[0].length));
}

/** Adds the complete lines of `text` to the open fence's code, as text; a closing fence line (the
 *  server commits the block at once) turns the view back to raw text. */
function appendCode(el, state, text) {
  const view = state.code;
  const joined = view.partial + text;
  const end = joined.lastIndexOf('\n');
  if (end < 0) {
    view.partial = joined;
    return;
  }
  view.partial = joined.slice(end + 1);
  let lines = joined.slice(0, end + 1).replace(/\r\n?/g, '\n').split('\n');
  lines.pop();
  if (lines.some((line) => view.closing.test(line))) {
    // Back to raw text: the server commits the block with this line, and its `tail` follows.
    state.code = null;
    state.decided = true;
    state.raw.data = state.text;
    view.box.remove();
    return;
  }
  // The fence's own indentation is taken off each line, as cmark does.
  if (view.indent) lines = lines.map((line) => line.replace(view.indent, ''));
  let rest = lines;
  while (rest.length > 0) {
    if (view.lines >= CODE_CHUNK_LINES) {
      view.chunk = document.createTextNode('');
      const span = document.createElement('span');
      span.className = 'code-chunk';
      const code = document.createElement('code');
      if (view.language) code.className = `language-${view.language}`;
      code.append(view.chunk);
      span.append(code);
      view.pre.append(span);
      view.lines = 0;
    }
    const take = rest.slice(0, CODE_CHUNK_LINES - view.lines);
    view.chunk.appendData(take.join('\n') + '\n');
    view.lines += take.length;
    rest = rest.slice(take.length);
  }
}

function showTail(el, state) {
  const box = el.querySelector('.message-tail-code');
  if (!state.code && box) box.remove();
  // The provisional HTML, when there is one, stands for the whole tail (the code view included).
  const provisional = typeof state.html === 'string';
  if (state.code) state.code.box.hidden = provisional;
  parts(el).tail.hidden = provisional || state.code !== null || !state.raw || state.raw.data === '';
}

/** `done.patch`: replaces already shown blocks in place; unknown indexes are appended. */
export function applyPatch(el, patch) {
  for (const item of patch || []) putBlock(el, item.index, item.html);
}

/** The HTML now shown (block sources joined), to compare with the stored message. */
export function shownHTML(el) {
  const { blocks } = parts(el);
  if (typeof blocks.sourceHTML === 'string') return blocks.sourceHTML;
  const list = blocks.querySelectorAll(':scope > .block');
  if (list.length !== blocks.children.length) return null;
  return Array.from(list, (block) => block.sourceHTML).join('');
}

export function blockCount(el) {
  return parts(el).blocks.querySelectorAll(':scope > .block').length;
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

  el.querySelector('[data-action="edit"]').hidden = !isUser || message.local === true;
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
