// The syntax highlighter's worker (a module worker, started by highlight.js): highlight.js 11 from
// the vendored reveal.js highlight plugin (vendor/highlight/README.md), one block per message.
// Answers `{ready: true}` once loaded, then `{id, html}` per `{id, code, language}`, `html` null when
// the language is unknown or the highlighter threw. The page gives each block a time limit and
// terminates this worker past it, so nothing here needs to guard against a slow grammar.

// The plugin's bundle also carries a line-number add-on that touches `window` and `document` when it
// loads; a worker has neither, so it gets inert stand-ins first (nothing of them is ever used).
const inertElement = { appendChild() {}, set innerHTML(_) {}, set type(_) {} };
globalThis.window = globalThis;
globalThis.document = {
  readyState: 'complete',
  createElement: () => ({ ...inertElement }),
  getElementsByTagName: () => [inertElement],
  querySelectorAll: () => [],
  addEventListener() {},
};

const { default: plugin } = await import('../vendor/highlight/highlight.esm.js');
const hljs = plugin().hljs;

self.addEventListener('message', (event) => {
  const { id, code, language } = event.data || {};
  let html = null;
  try {
    if (typeof code === 'string' && typeof language === 'string' && hljs.getLanguage(language)) {
      html = hljs.highlight(code, { language, ignoreIllegals: true }).value;
    }
  } catch {
    html = null;
  }
  self.postMessage({ id, html });
});
self.postMessage({ ready: true });
