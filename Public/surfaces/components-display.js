// The basic catalog's layout and display components, one function each: Text, Image, Icon, Row,
// Column, List, Card, Tabs, Divider and Modal. Each takes the component (its JSON from the model) and
// the renderer's context `ctx` (renderer.js: children, bound values, ids) and returns an element built
// with DOM APIs; the model's strings go in as text, its enums only choose among the page's classes.
import { iconLabel, iconNode } from './icons.js';

/** The only images drawn: the caller's own Parley files (the server checks the same). */
const FILE_URL = /^\/api\/files\/[A-Za-z0-9_-]{1,128}(\?variant=(thumb|preview))?$/;
/** The page's title is its h1: an answer's headings start at h2. */
const HEADINGS = { h1: 'h2', h2: 'h3', h3: 'h4', h4: 'h5', h5: 'h6' };

export function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** `value` when it is one of `allowed`, else `fallback`: how an enum becomes a class. */
export function pick(value, allowed, fallback) {
  return allowed.includes(value) ? value : fallback;
}

export function Text(component, ctx) {
  const variant = pick(component.variant, ['h1', 'h2', 'h3', 'h4', 'h5', 'caption', 'body'], 'body');
  // Inside a button only phrasing content is allowed: a span.
  const tag = ctx.inButton ? 'span' : HEADINGS[variant] || 'p';
  const node = make(tag, `a2ui-text variant-${variant}`);
  ctx.bind(() => {
    const text = ctx.text(component.text);
    if (node.textContent !== text) node.textContent = text;
  });
  return node;
}

export function Image(component, ctx) {
  const variant = pick(component.variant, ['icon', 'avatar', 'smallFeature', 'mediumFeature', 'largeFeature', 'header'], 'mediumFeature');
  const fit = pick(component.fit, ['contain', 'cover', 'fill', 'none', 'scaleDown'], 'fill');
  const box = make('span', `a2ui-image variant-${variant} fit-${fit}`);
  ctx.bind(() => {
    const url = ctx.text(component.url);
    const alt = ctx.text(component.description) || ctx.label(component);
    if (box.shownURL === url && box.shownAlt === alt) return;
    box.shownURL = url;
    box.shownAlt = alt;
    if (FILE_URL.test(url)) {
      const image = make('img');
      image.alt = alt;
      image.loading = 'lazy';
      image.src = url;
      box.replaceChildren(image);
    } else {
      box.replaceChildren(make('span', 'a2ui-missing', alt ? `Image not shown: ${alt}` : 'Image not shown'));
    }
  });
  return box;
}

export function Icon(component, ctx) {
  const node = make('span', 'a2ui-icon');
  ctx.bind(() => {
    const name = component.name && typeof component.name.path === 'string' ? ctx.value(component.name) : component.name;
    const glyph = iconNode(name);
    node.replaceChildren(...(glyph ? [glyph] : []));
    const label = ctx.label(component) || (ctx.inButton ? iconLabel(name) : '');
    if (label) {
      node.setAttribute('role', 'img');
      node.setAttribute('aria-label', label);
      node.removeAttribute('aria-hidden');
    } else {
      node.removeAttribute('role');
      node.removeAttribute('aria-label');
      node.setAttribute('aria-hidden', 'true');
    }
  });
  return node;
}

const JUSTIFY = ['start', 'center', 'end', 'spaceBetween', 'spaceAround', 'spaceEvenly', 'stretch'];
const ALIGN = ['start', 'center', 'end', 'stretch'];

function flex(kind, component, ctx) {
  const node = make('div', `a2ui-flex a2ui-${kind} justify-${pick(component.justify, JUSTIFY, 'start')} align-${pick(component.align, ALIGN, 'stretch')}`);
  node.append(...ctx.children(component.children, { weighted: true }));
  return node;
}

export function Row(component, ctx) {
  return flex('row', component, ctx);
}

export function Column(component, ctx) {
  return flex('column', component, ctx);
}

export function List(component, ctx) {
  const direction = pick(component.direction, ['vertical', 'horizontal'], 'vertical');
  const list = make('ul', `a2ui-list direction-${direction} align-${pick(component.align, ALIGN, 'stretch')}`);
  for (const child of ctx.children(component.children)) {
    const item = make('li', 'a2ui-list-item');
    item.append(child);
    list.append(item);
  }
  return list;
}

export function Card(component, ctx) {
  const card = make('div', 'a2ui-card');
  const child = ctx.child(component.child);
  if (child) card.append(child);
  return card;
}

export function Divider(component) {
  const axis = pick(component.axis, ['horizontal', 'vertical'], 'horizontal');
  const rule = make('hr', `a2ui-divider axis-${axis}`);
  if (axis === 'vertical') rule.setAttribute('aria-orientation', 'vertical');
  return rule;
}

/** Tabs: a tablist of buttons (arrow keys, Home and End move between them) and one panel each. */
export function Tabs(component, ctx) {
  const box = make('div', 'a2ui-tabs');
  const list = make('div', 'a2ui-tablist');
  list.setAttribute('role', 'tablist');
  const tabs = [];
  const panels = [];
  const entries = Array.isArray(component.tabs) ? component.tabs.filter((tab) => tab && typeof tab === 'object') : [];
  entries.forEach((entry, index) => {
    const tab = make('button', 'a2ui-tab');
    tab.type = 'button';
    tab.id = ctx.uid();
    tab.setAttribute('role', 'tab');
    ctx.bind(() => { tab.textContent = ctx.text(entry.title) || `Tab ${index + 1}`; });
    const panel = make('div', 'a2ui-tabpanel');
    panel.id = ctx.uid();
    panel.setAttribute('role', 'tabpanel');
    panel.setAttribute('aria-labelledby', tab.id);
    panel.tabIndex = 0;
    tab.setAttribute('aria-controls', panel.id);
    const child = ctx.child(entry.child);
    if (child) panel.append(child);
    tabs.push(tab);
    panels.push(panel);
  });
  const select = (chosen, focus) => {
    tabs.forEach((tab, index) => {
      const on = index === chosen;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
      panels[index].hidden = !on;
    });
    if (focus) tabs[chosen].focus();
  };
  tabs.forEach((tab, index) => {
    tab.addEventListener('click', () => select(index, false));
    tab.addEventListener('keydown', (event) => {
      const last = tabs.length - 1;
      const to = { ArrowRight: index === last ? 0 : index + 1, ArrowLeft: index === 0 ? last : index - 1, Home: 0, End: last }[event.key];
      if (to === undefined) return;
      event.preventDefault();
      select(to, true);
    });
  });
  list.append(...tabs);
  box.append(list, ...panels);
  if (tabs.length) select(0, false);
  return box;
}

/** Modal: its trigger opens a native dialog (focus moves in, Escape closes it) holding its content. */
export function Modal(component, ctx) {
  const box = make('div', 'a2ui-modal');
  const dialog = make('dialog', 'dialog a2ui-dialog');
  dialog.setAttribute('aria-label', ctx.label(component) || 'Details');
  const content = ctx.child(component.content);
  const close = make('button', 'button small a2ui-dialog-close', 'Close');
  close.type = 'button';
  close.addEventListener('click', () => dialog.close());
  const actions = make('div', 'form-actions');
  actions.append(close);
  dialog.append(...(content ? [content] : []), actions);
  const trigger = ctx.child(component.trigger, { opener: () => dialog.showModal() });
  if (trigger) box.append(trigger);
  box.append(dialog);
  return box;
}
