// One item of the conversation list (and only its DOM): the link with its title and an "imported"
// badge, and the conversation's "⋯" menu button (menu.js; its items are conversation-menu.js's, the
// same as the top bar's). The item keeps the conversation's summary ({id, title, pinned, archived}) for
// its menu; the list (sidebar.js) decides where it goes, the controller what a menu item does.
import { MenuButton } from '../shared/menu.js';
import { fillConversationMenu } from './conversation-menu.js';

/** A new item for `conversation`; `current`: it is the open one; `onAction(action, summary)` takes a
 *  choice in its menu. */
export function conversationItem(conversation, { current, onAction }) {
  const li = document.createElement('li');
  li.className = 'conversation-item';
  const link = document.createElement('a');
  link.href = `#/c/${encodeURIComponent(conversation.id)}`;
  if (current) link.setAttribute('aria-current', 'page');
  const title = document.createElement('span');
  title.className = 'item-title';
  link.append(title);
  if (conversation.imported) {
    const badge = document.createElement('span');
    badge.className = 'badge imported-badge';
    badge.textContent = 'imported';
    link.append(' ', badge);
  }
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'button small icon-button menu-button item-menu-button';
  button.setAttribute('aria-haspopup', 'menu');
  button.setAttribute('aria-expanded', 'false');
  button.textContent = '⋯';
  const menu = document.createElement('div');
  menu.className = 'action-menu';
  menu.setAttribute('role', 'menu');
  menu.hidden = true;
  menu.id = `item-menu-${conversation.id}`;
  button.setAttribute('aria-controls', menu.id);
  // The menu opens in the list's flow, under its item (it pushes the items below down rather than
  // covering them).
  li.append(link, button, menu);
  li.dataset.id = conversation.id;
  li.summary = { id: conversation.id, title: conversation.title, pinned: conversation.pinned === true,
    archived: conversation.archived === true };
  new MenuButton(button, menu, {
    fill: (element) => fillConversationMenu(element, li.summary),
    onChoose: (item) => onAction(item.dataset.action, { ...li.summary }),
  });
  setItemTitle(li, conversation.title);
  return li;
}

/** The item's title (shown, as tooltip, and in its menu's names). */
export function setItemTitle(li, title) {
  const link = li.firstElementChild;
  const text = title || 'Untitled';
  link.querySelector('.item-title').textContent = text;
  link.title = text;
  li.summary.title = title;
  const button = li.querySelector('.item-menu-button');
  button.setAttribute('aria-label', `Actions for ${text}`);
  li.querySelector('.action-menu').setAttribute('aria-label', `Actions for ${text}`);
}
