// The tail of a streaming answer: the raw open end after its committed blocks, or the server's
// provisional rendering of it (`tail_html`). Kept as text on the element (`el.tailState`); shown raw
// in `.message-tail`, one text node that grows with appendData, except an open code fence at its start,
// which is shown as a code block: its complete lines go into the `<pre>` as text, in chunks of
// CODE_CHUNK_LINES lines, each a block holding a `<code>` (so an append lays out one chunk, not the
// whole block, and every line box is built as in the committed `<pre><code>`: same height, no jump when
// it replaces the view). The fence rules are code-fence.js's (the server's); this module only shows.
import { codeBox, enhance, fragmentFrom } from './server-html.js';
import { openingFence, closesFence, fenceLanguage } from './code-fence.js';
import { syncBody } from './message-waiting.js';

const CODE_CHUNK_LINES = 64;
/** Blank lines, then one complete line that is not blank: enough to know whether the tail opens a
 *  fence (a tail of blank lines alone decides nothing: the fence may come next). */
const FIRST_LINE = /^(?:[ \t]*\n)*[ \t]*\S[^\n]*\n/;

/** Leading blank lines and spaces of the raw tail are not shown (cmark drops them too). */
const LEADING_SPACE = /^\s+/;

function tailElement(el) {
  return el.querySelector('.message-tail');
}

function tailState(el) {
  if (!el.tailState) el.tailState = { text: '', raw: null, code: null, decided: false, html: null };
  return el.tailState;
}

/** Whether the tail is shown as an open code fence (a committed block then takes its place). */
export function tailShowsCode(el) {
  return Boolean(el.tailState && el.tailState.code);
}

/** `tail`, snapshot and reconcile: the raw open end, replaced as a whole. */
export function setTail(el, text) {
  const state = tailState(el);
  state.text = text;
  state.decided = false;
  state.code = null;
  state.raw = document.createTextNode(text.replace(LEADING_SPACE, ''));
  tailElement(el).replaceChildren(state.raw);
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
      tailElement(el).before(box);
    }
    const fragment = fragmentFrom(state.html);
    enhance(fragment);
    box.replaceChildren(fragment);
  }
  showTail(el, state);
}

/** Whether the tail opens a code fence (once its first line is complete) and shows it accordingly. */
function decideTail(el, state) {
  const fence = openingFence(state.text);
  if (fence) {
    state.decided = true;
    openCode(el, state, fence);
  } else {
    state.decided = FIRST_LINE.test(state.text);
  }
  showTail(el, state);
}

function openCode(el, state, fence) {
  const language = fenceLanguage(fence);
  const box = codeBox(language);
  box.classList.add('message-tail-code');
  const pre = document.createElement('pre');
  pre.tabIndex = 0; // as in enhance()
  box.append(pre);
  const old = el.querySelector('.message-tail-code');
  if (old) old.replaceWith(box);
  else tailElement(el).before(box);
  state.code = {
    box, pre, language, fence, chunk: null, lines: CODE_CHUNK_LINES, partial: '',
    indent: fence.indent ? new RegExp(`^ {1,${fence.indent}}`) : null,
  };
  appendCode(el, state, state.text.slice(fence.end));
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
  if (lines.some((line) => closesFence(view.fence, line))) {
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
  tailElement(el).hidden = provisional || state.code !== null || !state.raw || state.raw.data === '';
}
