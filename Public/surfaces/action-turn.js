// A user turn made by a surface's Button (its part `{type: "action", surface_id, action}`): shown as a
// chip with the action's name and the values it sent, not as the JSON the model reads. A view: DOM
// only, every value as text.

/** Values longer than this are cut in the chip (the turn keeps them whole). */
const VALUE_MAX = 200;

/** The action part of `parts`, or null. */
export function actionPart(parts) {
  return (Array.isArray(parts) ? parts : []).find((part) => part && part.type === 'action' && part.action && typeof part.action === 'object') || null;
}

/** "submit_order" or "submitOrder" → "submit order". */
function words(name) {
  return String(name || 'action').replace(/[_-]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().trim();
}

function shown(value) {
  let text;
  if (typeof value === 'boolean') text = value ? 'yes' : 'no';
  else if (Array.isArray(value)) text = value.map((item) => (typeof item === 'object' ? JSON.stringify(item) : String(item))).join(', ');
  else if (value === null || value === undefined) text = '—';
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  return text.length > VALUE_MAX ? `${text.slice(0, VALUE_MAX - 1)}…` : text;
}

function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Draws the action turn of `parts` into the message element `el` (in place of its text); returns
 *  whether it was one. */
export function showActionTurn(el, parts) {
  const part = actionPart(parts);
  if (!part) return false;
  const { action } = part;
  const box = make('div', 'action-turn');
  const chip = make('p', 'action-chip');
  const mark = make('span', 'action-chip-mark', '↩');
  mark.setAttribute('aria-hidden', 'true');
  chip.append(mark, ` Chose: ${words(action.name)}`);
  box.append(chip);
  const context = action.context && typeof action.context === 'object' ? Object.entries(action.context) : [];
  if (context.length) {
    const list = make('dl', 'action-context');
    for (const [key, value] of context) {
      const row = make('div', 'action-context-item');
      row.append(make('dt', '', words(key)), make('dd', '', shown(value)));
      list.append(row);
    }
    box.append(list);
  }
  el.querySelector('.message-blocks').replaceChildren(box);
  const tail = el.querySelector('.message-tail');
  tail.textContent = '';
  tail.hidden = true;
  el.classList.add('is-action-turn');
  return true;
}
