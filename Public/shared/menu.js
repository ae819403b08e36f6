// A menu button (WAI-ARIA menu button pattern): a button with aria-haspopup="menu" opens a
// role="menu" of role="menuitem" buttons and links. The arrow keys, Home and End move among the items,
// Escape closes the menu and gives the focus back to its button, Tab or a click elsewhere closes it.
// Choosing an item closes the menu, puts the focus on the button (where a dialog the item opens gives
// it back) and calls `onChoose(item)`. One menu is open at a time.

let openMenu = null;

document.addEventListener('click', (event) => {
  if (openMenu && !openMenu.contains(event.target)) openMenu.close();
});

export class MenuButton {
  /** `fill(menu)` builds the items just before the menu opens (they may depend on the moment). */
  constructor(button, menu, { fill = () => {}, onChoose = () => {} } = {}) {
    Object.assign(this, { button, menu, fill, onChoose });
    button.addEventListener('click', () => (this.isOpen ? this.close() : this.open('first')));
    button.addEventListener('keydown', (event) => {
      if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
      event.preventDefault();
      this.open(event.key === 'ArrowDown' ? 'first' : 'last');
    });
    menu.addEventListener('keydown', (event) => this.keydown(event));
    menu.addEventListener('click', (event) => {
      const item = event.target.closest('[role="menuitem"]');
      if (!item || item.getAttribute('aria-disabled') === 'true') return;
      this.close();
      button.focus();
      this.onChoose(item);
    });
  }

  get isOpen() {
    return !this.menu.hidden;
  }

  contains(node) {
    return this.button.contains(node) || this.menu.contains(node);
  }

  items() {
    return Array.from(this.menu.querySelectorAll('[role="menuitem"]')).filter((item) => !item.hidden);
  }

  open(focus) {
    if (openMenu && openMenu !== this) openMenu.close();
    this.fill(this.menu);
    for (const item of this.items()) item.tabIndex = -1;
    this.menu.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    openMenu = this;
    const items = this.items();
    const target = focus === 'last' ? items[items.length - 1] : items[0];
    if (target) target.focus();
    this.menu.scrollIntoView({ block: 'nearest' });
  }

  close() {
    this.menu.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
    if (openMenu === this) openMenu = null;
  }

  keydown(event) {
    const items = this.items();
    const index = items.indexOf(document.activeElement);
    let next = null;
    switch (event.key) {
      case 'ArrowDown': next = items[(index + 1) % items.length]; break;
      case 'ArrowUp': next = items[(index - 1 + items.length) % items.length]; break;
      case 'Home': next = items[0]; break;
      case 'End': next = items[items.length - 1]; break;
      case 'Escape':
        event.preventDefault(); // the page's own Escape (stop an answer, close the drawer) must not run too
        event.stopPropagation();
        this.close();
        this.button.focus();
        return;
      case 'Tab':
        this.close();
        return;
      default:
        return;
    }
    event.preventDefault();
    if (next) next.focus();
  }
}
