// The server's HTML as the page shows it: cmark-gfm's sanitised HTML parsed once into a fragment, each
// code block framed (language label, Copy code; highlighted later by highlight.js), wide tables and
// code reachable by keyboard, and outside links opened outside the app. It builds DOM only: it never
// changes the HTML's text, and only committed or provisional HTML comes here, never the raw tail.
import { highlightLater } from './highlight.js';

/** Parses trusted, server-sanitised HTML into a fragment (no layout, nothing executes). */
export function fragmentFrom(html) {
  const holder = document.createElement('template');
  holder.innerHTML = html;
  return holder.content;
}

/** The frame of a code block: its head (language label, copy button); the `<pre>` goes after it. */
export function codeBox(language) {
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
