// Small DOM builders shared by the account and admin views: elements from plain values, never HTML strings.

/** `el('td', { className: 'x' }, 'text', child)`: properties are set as properties, `data-*` and
 *  `aria-*` as attributes; strings become text nodes. */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('data-') || key.startsWith('aria-')) node.setAttribute(key, value);
    else node[key] = value;
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

/** A time from the API (ISO-8601) in the person's locale; an em dash for none. */
export function when(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** Every `[data-close]` button inside `dialog` closes it. */
export function closesOnDataClose(dialog) {
  dialog.addEventListener('click', (event) => {
    if (event.target.closest('[data-close]')) dialog.close();
  });
}
