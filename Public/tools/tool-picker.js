// The Tools list of the Chat settings dialog (chat/settings.js): every tool this person may use (GET
// /api/tools) with a checkbox, unavailable ones marked but still listed, the conversation's `tools`
// ticked (`<server>/*` ticks all of that server's). A view: the dialog reads `selection()` when it saves.

let counter = 0;

function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class ToolPicker {
  /** `ui`: list (the `<ul>`), status (a line for "Loading…" and failures). */
  constructor(ui) {
    this.ui = ui;
    this.items = null; // the tools listed, null until read
    this.chosen = []; // the conversation's `tools`, as last given
  }

  /** The conversation's `tools` (ids and `<server>/*`): ticked now, or once the list is shown. */
  select(tools) {
    this.chosen = Array.isArray(tools) ? tools : [];
    if (!this.items) return;
    for (const box of this.boxes()) box.checked = this.isChosen(this.items[Number(box.dataset.index)]);
  }

  showLoading() {
    if (!this.items) this.setStatus('Loading the tools…');
  }

  showFailure(text) {
    if (!this.items) this.setStatus(`Could not load the tools: ${text}`);
  }

  /** The tools one may use, ticked as the conversation's `tools` say. */
  show(items) {
    this.items = items;
    this.ui.list.replaceChildren(...items.map((tool, index) => this.row(tool, index)));
    this.setStatus(items.length === 0 ? 'No tools are configured on this server.' : '');
    this.select(this.chosen);
  }

  row(tool, index) {
    counter += 1;
    const id = `tool-pick-${counter}`;
    const item = make('li', 'tool-pick');
    const box = make('input', 'tool-pick-box');
    box.type = 'checkbox';
    box.id = id;
    box.dataset.index = String(index);
    const label = make('label', 'tool-pick-label');
    label.htmlFor = id;
    label.append(make('span', 'tool-pick-title', tool.title || tool.name || tool.id), ' ', make('span', 'tool-pick-id', tool.id));
    if (tool.available === false) label.append(' ', make('span', 'tool-pick-tag is-unavailable', 'unavailable'));
    if (tool.approval === 'always') label.append(' ', make('span', 'tool-pick-tag', 'asks first'));
    item.append(box, label);
    if (tool.description) {
      const hint = make('p', 'field-hint tool-pick-description', tool.description);
      hint.id = `${id}-hint`;
      box.setAttribute('aria-describedby', hint.id);
      item.append(hint);
    }
    return item;
  }

  boxes() {
    return [...this.ui.list.querySelectorAll('.tool-pick-box')];
  }

  isChosen(tool) {
    return this.chosen.includes(tool.id) || this.chosen.includes(`${tool.server}/*`);
  }

  /** The `tools` to save, or null while no list is shown (the field is then left as it is). A server
   *  chosen as `<server>/*` stays so while all its tools are ticked (its new tools come too). */
  selection() {
    if (!this.items) return null;
    const ticked = new Set(this.boxes().filter((box) => box.checked).map((box) => this.items[Number(box.dataset.index)].id));
    const tools = [];
    for (const wildcard of this.chosen.filter((entry) => entry.endsWith('/*'))) {
      const server = wildcard.slice(0, -2);
      const all = this.items.filter((tool) => tool.server === server);
      if (all.length > 0 && all.every((tool) => ticked.has(tool.id))) {
        tools.push(wildcard);
        for (const tool of all) ticked.delete(tool.id);
      }
    }
    return [...tools, ...ticked];
  }

  /** What is ticked, to tell whether the person changed it. */
  key() {
    return this.items ? this.boxes().map((box) => (box.checked ? '1' : '0')).join('') : '';
  }

  setStatus(text) {
    this.ui.status.textContent = text;
    this.ui.status.hidden = text === '';
  }
}
