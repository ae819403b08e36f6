// The conversation list as a drawer on a narrow screen: opened by the top bar's button, closed by
// the scrim, by following a link in it, or by the controller (Escape, New conversation). Opening it
// puts the focus on its first button (`first`), never the search box: on a phone that would pop up
// the keyboard over the list.

export class Drawer {
  constructor({ app, sidebar, scrim, toggle, first }) {
    this.app = app;
    this.toggle = toggle;
    this.first = first;
    toggle.addEventListener('click', () => this.setOpen(!this.isOpen));
    scrim.addEventListener('click', () => this.setOpen(false));
    sidebar.addEventListener('click', (event) => {
      if (event.target.closest('a')) this.setOpen(false);
    });
  }

  get isOpen() {
    return this.app.classList.contains('sidebar-open');
  }

  setOpen(open) {
    this.app.classList.toggle('sidebar-open', open);
    this.toggle.setAttribute('aria-expanded', String(open));
    this.toggle.setAttribute('aria-label', open ? 'Hide conversations' : 'Show conversations');
    if (open) this.first.focus();
  }
}
