// Syntax highlighting of committed code blocks, off the main thread. Model output is hostile input
// for a highlighter's regular expressions, so highlight.js runs in a Web Worker (highlight-worker.js)
// one block at a time, with a size cap and a time limit: a block that takes longer than the limit has
// its worker terminated (a fresh one takes the next block) and stays plain. Highlighting changes only
// the page's DOM (spans inside the `<code>`); the server's HTML and every block's `sourceHTML` stay as
// cmark-gfm made them. A block is highlighted once, never while it streams.

/** Blocks longer than this stay plain (characters of code). */
export const HIGHLIGHT_MAX_CHARS = 100_000;
/** A block that takes longer than this stays plain, and its worker is replaced. */
export const HIGHLIGHT_TIME_LIMIT_MS = 1500;

const queue = []; // code elements waiting, oldest first
let worker = null;
let ready = false;
let current = null; // { id, code, text, timer }
let sequence = 0;
let scheduled = false;
/** Workers that failed before they were ready; past MAX_START_FAILURES highlighting is off. */
let startFailures = 0;
const MAX_START_FAILURES = 2;

/** The language of a `<code class="language-x">`, or '' (no auto-detection: it runs every grammar). */
function languageOf(code) {
  for (const name of code.classList) {
    if (name.startsWith('language-')) return name.slice('language-'.length).toLowerCase();
  }
  return '';
}

/** Asks for `code` (a committed block's `<code>`) to be highlighted soon; anything else is ignored. */
export function highlightLater(code) {
  if (code.dataset.highlight) return;
  const text = code.textContent;
  if (!languageOf(code) || text.length === 0) return;
  if (text.length > HIGHLIGHT_MAX_CHARS) {
    code.dataset.highlight = 'too-large';
    return;
  }
  code.dataset.highlight = 'queued';
  queue.push(code);
  // Later, not now: the block is still being built (a fragment, not yet in the page).
  if (!scheduled) {
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      next();
    }, 0);
  }
}

function startWorker() {
  ready = false;
  worker = new Worker(new URL('./highlight-worker.js', import.meta.url), { type: 'module', name: 'highlight' });
  worker.addEventListener('message', (event) => received(event.data));
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    if (!ready) startFailures += 1;
    giveUp('failed');
  });
}

function next() {
  if (current) return;
  if (startFailures >= MAX_START_FAILURES) {
    // The worker cannot load here: every block stays plain.
    for (const code of queue.splice(0)) code.dataset.highlight = 'plain';
    return;
  }
  if (queue.length === 0) return;
  if (!worker) startWorker();
  if (!ready) return; // the worker says `ready` once its module is loaded
  while (queue.length > 0) {
    const code = queue.shift();
    if (!code.isConnected) {
      delete code.dataset.highlight; // shown again later (a re-rendered block is a new element anyway)
      continue;
    }
    sequence += 1;
    current = { id: sequence, code, text: code.textContent };
    current.timer = setTimeout(() => giveUp('timeout'), HIGHLIGHT_TIME_LIMIT_MS);
    worker.postMessage({ id: current.id, code: current.text, language: languageOf(code) });
    return;
  }
}

function received(data) {
  if (data && data.ready) {
    ready = true;
    startFailures = 0;
    next();
    return;
  }
  if (!current || !data || data.id !== current.id) return;
  const { code, text, timer } = current;
  clearTimeout(timer);
  current = null;
  if (typeof data.html === 'string' && code.isConnected && code.textContent === text) apply(code, text, data.html);
  else code.dataset.highlight = 'plain';
  next();
}

/** The worker hung or failed: it is replaced, and the block it had stays plain. */
function giveUp(reason) {
  if (worker) worker.terminate();
  worker = null;
  ready = false;
  if (current) {
    clearTimeout(current.timer);
    current.code.dataset.highlight = reason;
    current = null;
  }
  next();
}

/** Puts the highlighted markup in place, only if it is spans around exactly the same text. */
function apply(code, text, html) {
  const holder = document.createElement('template');
  holder.innerHTML = html;
  const content = holder.content;
  const safe = content.textContent === text && [...content.querySelectorAll('*')].every(
    (node) => node.localName === 'span' && node.attributes.length === 1 && node.hasAttribute('class'));
  if (!safe) {
    code.dataset.highlight = 'plain';
    return;
  }
  code.replaceChildren(content);
  code.classList.add('hljs');
  code.dataset.highlight = 'done';
}
