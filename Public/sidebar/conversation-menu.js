// The items of a conversation's "⋯" menu, the same in the top bar and on each item of the conversation
// list: Pin or Unpin, Archive or Unarchive, Rename…, Export JSON, Export Markdown (download links: the
// server names the files after the title) and Delete…. It only builds DOM; what an item does is the
// controller's (app.js), told by the item's `data-action`.
import { Api } from '../transport/api.js';
import { el } from '../shared/dom.js';

/** Fills `menu` for `conversation` ({id, title, pinned, archived}). `ids`: give the items the top
 *  bar's ids (`pin`, `archive`, `rename`, `export-json`, `export-markdown`, `delete`). */
export function fillConversationMenu(menu, conversation, { ids = false } = {}) {
  const item = (action, text, extra = {}) => el('button', {
    type: 'button', className: `menu-item${action === 'delete' ? ' danger' : ''}`, role: 'menuitem',
    id: ids ? action : undefined, textContent: text, 'data-action': action, ...extra,
  });
  const link = (action, text, format) => {
    const anchor = el('a', {
      className: 'menu-item', href: Api.exportURL(conversation.id, format), id: ids ? action : undefined,
      textContent: text, 'data-action': action,
    });
    anchor.setAttribute('role', 'menuitem');
    anchor.setAttribute('download', '');
    return anchor;
  };
  const items = [
    item('pin', conversation.pinned ? 'Unpin' : 'Pin'),
    item('archive', conversation.archived ? 'Unarchive' : 'Archive'),
    item('rename', 'Rename…'),
    link('export-json', 'Export JSON', 'json'),
    link('export-markdown', 'Export Markdown', 'md'),
    item('delete', 'Delete…'),
  ];
  for (const node of items) {
    if (node.tagName === 'BUTTON') node.setAttribute('role', 'menuitem');
  }
  menu.replaceChildren(...items);
}
