// A reply's body as segments in the order they happened (issue 20): text, tool cards and the hosts of
// interactive answers (issue 22: `.surface-host`, filled by surfaces/surface-board.js). All of them
// sit in `.message-blocks`: the streamed blocks (`.block`, found by their index, which counts across the
// whole reply, so the first block after a card is a new text after it), a finished text part's HTML
// (`.message-text`), and the cards (tools/tool-card.js). The streaming tail comes after
// `.message-blocks`, and it always belongs to the last text, which comes after every card so far. It
// builds DOM only; view.js re-exports what the message list uses.
import { enhance, fragmentFrom } from './server-html.js';
import { setTail, setTailHTML } from './message-tail.js';
import { createToolCard, updateToolCard } from '../tools/tool-card.js';

/** One committed block of the stream (its index and source HTML kept on the element). */
export function blockElement(index, html) {
  const block = document.createElement('div');
  block.className = 'block';
  block.dataset.index = String(index);
  block.sourceHTML = html;
  block.append(fragmentFrom(html));
  enhance(block);
  return block;
}

/** The block numbered `index` in `blocks` (`.message-blocks`), or null. */
export function findBlock(blocks, index) {
  return blocks.querySelector(`:scope > .block[data-index="${Number(index)}"]`);
}

/** The card of call `id` in message element `el`, or null. */
export function findCard(el, id) {
  return el.querySelector(`.message-blocks > .tool-card[data-call-id="${CSS.escape(id)}"]`);
}

function cardView(el, part, titleOf) {
  return { messageId: el.dataset.id, title: titleOf ? titleOf(part.tool) : '' };
}

/** A finished text part: its HTML (or, without one, its text as plain text). */
function textElement(part) {
  const text = document.createElement('div');
  text.className = 'message-text';
  if (typeof part.html === 'string') {
    text.sourceHTML = part.html;
    text.append(fragmentFrom(part.html));
    enhance(text);
  } else {
    text.classList.add('is-plain');
    text.textContent = part.text || '';
  }
  return text;
}

/**
 * The segments of `parts` in one fragment. With `blocks` (a snapshot), a text part is its blocks
 * `blocks[first_block ..< first_block + block_count]`, and blocks no part names come last; without,
 * it is the part's own HTML. Returns {fragment, html}: html is the text parts' HTML joined (finished
 * parts only), to compare with the stored message.
 */
export function partsFragment(el, parts, { blocks = null, titleOf = null } = {}) {
  const fragment = document.createDocumentFragment();
  const html = [];
  let next = 0;
  for (const part of parts || []) {
    if (part.type === 'tool_call') {
      fragment.append(createToolCard(part, cardView(el, part, titleOf)));
    } else if (part.type === 'surface' && typeof part.surface_id === 'string') {
      if (!fragment.querySelector(`.surface-host[data-surface-id="${CSS.escape(part.surface_id)}"]`)) {
        fragment.append(surfaceHost(part.surface_id));
      }
    } else if (part.type === 'text' && blocks) {
      const first = Number(part.first_block) || 0;
      const end = Math.min(blocks.length, first + (Number(part.block_count) || 0));
      for (let index = Math.max(first, next); index < end; index += 1) fragment.append(blockElement(index, blocks[index]));
      next = Math.max(next, end);
    } else if (part.type === 'text' && (part.text || part.html)) {
      fragment.append(textElement(part));
      html.push(part.html || '');
    }
  }
  if (blocks) {
    for (let index = next; index < blocks.length; index += 1) fragment.append(blockElement(index, blocks[index]));
  }
  return { fragment, html: html.join('') };
}

/** A finished reply with tool calls: its parts in order, the text parts' HTML and the cards. */
export function setParts(el, parts, titleOf = null) {
  const blocks = el.querySelector('.message-blocks');
  const drawn = partsFragment(el, parts, { titleOf });
  blocks.replaceChildren(drawn.fragment);
  blocks.sourceHTML = drawn.html;
  setTail(el, '');
  setTailHTML(el, null);
}

/** The stored parts after a streamed reply: the body is drawn again only if its text (`shownHTML`, the
 *  HTML now shown) or its number of cards differs; else only the cards are brought up to date. */
export function showStoredParts(el, parts, shownHTML, titleOf = null) {
  const html = parts.filter((part) => part.type === 'text').map((part) => part.html || '').join('');
  const calls = parts.filter((part) => part.type === 'tool_call').length;
  const hosts = new Set(parts.filter((part) => part.type === 'surface').map((part) => part.surface_id)).size;
  if (shownHTML !== html || cardCount(el) !== calls || hostCount(el) !== hosts) setParts(el, parts, titleOf);
  else refreshToolCards(el, parts, titleOf);
}

/** Whether `parts` hold a tool call or a surface (then the body is drawn from them). */
export function partsHaveCalls(parts) {
  return Array.isArray(parts) && parts.some((part) => part && (part.type === 'tool_call' || part.type === 'surface'));
}

/** The empty place of surface `surfaceId` in a reply (the surface board draws into it). */
function surfaceHost(surfaceId) {
  const host = document.createElement('div');
  host.className = 'surface-host';
  host.dataset.surfaceId = surfaceId;
  return host;
}

/** The host of surface `surfaceId` in message element `el`, made after everything shown so far at
 *  its first message (the text before it is closed, as before a tool card). */
export function putSurfaceHost(el, surfaceId) {
  const found = el.querySelector(`.message-blocks > .surface-host[data-surface-id="${CSS.escape(surfaceId)}"]`);
  if (found) return found;
  const host = surfaceHost(surfaceId);
  el.querySelector('.message-blocks').append(host);
  setTail(el, '');
  setTailHTML(el, null);
  return host;
}

/** A call's events (`tool_call`, `tool_call_delta`, `tool_result`): its card updated, or made after
 *  everything shown so far. Returns true when the card is new: the text before it is closed, so its
 *  tail is empty (the caller clears any provisional tail left). */
export function putToolCard(el, part, titleOf) {
  const card = findCard(el, part.id);
  if (card) {
    updateToolCard(card, part, cardView(el, part, titleOf));
    return false;
  }
  el.querySelector('.message-blocks').append(createToolCard(part, cardView(el, part, titleOf)));
  return true;
}

/** Every card of `el` shown again from `parts` (a decision's answer, the stored message, titles read
 *  later); cards not in `parts` stay as they are. */
export function refreshToolCards(el, parts, titleOf) {
  for (const part of parts || []) {
    if (part.type !== 'tool_call') continue;
    const card = findCard(el, part.id);
    if (card) updateToolCard(card, part, cardView(el, part, titleOf));
  }
}

/** The number of surface hosts shown in `el`. */
function hostCount(el) {
  return el.querySelectorAll('.message-blocks > .surface-host').length;
}

/** The number of cards shown in `el`. */
export function cardCount(el) {
  return el.querySelectorAll('.message-blocks > .tool-card').length;
}
