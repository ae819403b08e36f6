// Search: the sidebar's box asks the server (GET /api/conversations?q=, full text over titles and
// messages) and shows the results, each with its highlighted snippet, in place of the list. Typing is
// debounced; a newer query aborts the older request and only the newest answer is shown. The results
// follow changes told meanwhile (a rename, an archive, a deletion), even those told while the request
// was in flight. A view: the answers come from the controller (`find`), never from a request made here.
import { ApiError } from '../transport/api.js';

const DEBOUNCE_MS = 250;
/** How many results a search asks for (Api.search's `limit=50`): a full page may mean that more match. */
const RESULT_LIMIT = 50;

/**
 * The snippet as nodes: the server sends escaped text where `<mark>` is the only markup; anything
 * else that might get through is kept as its text only (parsed in a template: nothing loads or runs).
 */
export function snippetNodes(html) {
  const holder = document.createElement('template');
  holder.innerHTML = html || '';
  const out = document.createDocumentFragment();
  const walk = (node, into) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        into.append(child.data);
      } else if (child.nodeType === Node.ELEMENT_NODE && child.localName === 'mark' && into === out) {
        const mark = document.createElement('mark');
        walk(child, mark);
        into.append(mark);
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        walk(child, into);
      }
    }
  };
  walk(holder.content, out);
  return out;
}

export class ConversationSearch {
  /** `find(query, filters, signal)` resolves to the server's answer ({items, order}) or throws;
   *  `filters()`: what the list shows (`{archived: true}` in the archived view), searched alike;
   *  `onReveal(messageId)`: a result that matched a message was clicked (the controller shows it). */
  constructor({ input, results, status, listView, find, filters, onError, onReveal }) {
    Object.assign(this, { input, results, status, listView, find, filters, onError, onReveal });
    this.timer = null;
    this.controller = null;
    this.sequence = 0;
    this.query = '';
    this.currentId = null; // the conversation open, marked among the results
    this.capped = false; // the answer held RESULT_LIMIT results: more may match
    this.order = null;
    // Changes told while a request is in flight (id -> the change, null: deleted): its answer may
    // predate them, so they are applied to it.
    this.pending = new Map();
    input.addEventListener('input', () => this.schedule());
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && input.value !== '') {
        // Clears the search first; a second Escape reaches the page (closes the drawer).
        event.preventDefault();
        input.value = '';
        this.schedule();
      } else if (event.key === 'Enter') {
        event.preventDefault();
        this.run();
      } else if (event.key === 'ArrowDown' && !results.hidden) {
        event.preventDefault();
        this.step(null, 1);
      }
    });
    // Up and Down move between the results; Up from the first goes back to the box.
    results.addEventListener('keydown', (event) => {
      const link = event.target.closest('a');
      if (!link || (event.key !== 'ArrowDown' && event.key !== 'ArrowUp')) return;
      event.preventDefault();
      this.step(link, event.key === 'ArrowDown' ? 1 : -1);
    });
    results.addEventListener('click', (event) => {
      const link = event.target.closest('a[data-message-id]');
      if (link) this.onReveal(link.dataset.messageId);
    });
  }

  /** Focuses the result `by` after (or before) `from` (null: the box), or the box before the first. */
  step(from, by) {
    const links = [...this.results.querySelectorAll('a')];
    const index = (from ? links.indexOf(from) : -1) + by;
    if (index < 0) this.input.focus();
    else if (index < links.length) links[index].focus();
  }

  itemFor(id) {
    return this.results.querySelector(`li[data-id="${CSS.escape(id)}"]`);
  }

  /** A conversation deleted (here or elsewhere) leaves the results too. */
  forget(id) {
    if (this.controller) this.pending.set(id, null);
    const li = this.itemFor(id);
    if (!li) return;
    li.remove();
    this.showCount(this.results.children.length);
  }

  /** A conversation changed (`title`, `archived`; fields left out did not): its result follows, or
   *  leaves when the archived view no longer fits it. */
  update(change) {
    if (this.controller) {
      const earlier = this.pending.get(change.id);
      if (earlier !== null) this.pending.set(change.id, { ...earlier, ...change });
    }
    const li = this.itemFor(change.id);
    if (!li) return;
    if (typeof change.archived === 'boolean' && change.archived !== (this.filters().archived === true)) {
      li.remove();
      this.showCount(this.results.children.length);
      return;
    }
    if (change.title !== undefined) li.querySelector('.result-title').textContent = change.title || 'Untitled';
  }

  /** The results stay after one is opened: the open one (`id`, null: none) is marked, as in the list. */
  markCurrent(id = this.currentId) {
    this.currentId = id;
    for (const li of this.results.children) {
      const link = li.firstElementChild;
      if (li.dataset.id === id) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
  }

  get active() {
    return this.query !== '';
  }

  schedule() {
    clearTimeout(this.timer);
    if (this.input.value.trim() === '') {
      this.run();
      return;
    }
    this.timer = setTimeout(() => this.run(), DEBOUNCE_MS);
  }

  /** Searches for what the box holds now (or goes back to the list when it is empty). */
  async run() {
    clearTimeout(this.timer);
    const query = this.input.value.trim();
    const sequence = ++this.sequence;
    if (this.controller) this.controller.abort();
    this.controller = null;
    this.query = query;
    if (query === '') {
      this.showList();
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    this.pending.clear();
    this.results.setAttribute('aria-busy', 'true');
    try {
      const answer = await this.find(query, this.filters(), controller.signal);
      if (sequence !== this.sequence) return;
      this.showResults(answer);
    } catch (error) {
      if (sequence !== this.sequence) return;
      this.showFailure(error);
    } finally {
      if (sequence === this.sequence) {
        this.controller = null;
        this.results.removeAttribute('aria-busy');
      }
    }
  }

  /** Searches again (the archived view was switched, or this tab missed changes), if a search is showing. */
  refresh() {
    if (this.active) this.run();
  }

  showList() {
    this.results.hidden = true;
    this.results.replaceChildren();
    this.results.removeAttribute('aria-busy');
    this.listView.hidden = false;
    this.status.textContent = '';
  }

  showResults(answer) {
    const items = answer.items || [];
    const fragment = document.createDocumentFragment();
    for (const item of items) fragment.append(resultItem(item));
    this.results.replaceChildren(fragment);
    this.markCurrent();
    this.listView.hidden = true;
    this.order = answer.order;
    this.capped = items.length >= RESULT_LIMIT;
    for (const [id, change] of this.pending) {
      if (change === null) this.itemFor(id)?.remove();
      else this.update(change);
    }
    this.pending.clear();
    this.showCount(this.results.children.length);
  }

  showCount(count) {
    this.results.hidden = count === 0;
    const newest = this.order === 'newest' ? ', newest first' : '';
    const more = this.capped ? `; only the first ${RESULT_LIMIT} are shown, more may match` : '';
    this.status.textContent = count === 0
      ? 'No conversation matches.' : `${count} ${count === 1 ? 'result' : 'results'}${newest}${more}.`;
  }

  showFailure(error) {
    this.results.replaceChildren();
    this.results.hidden = true;
    this.listView.hidden = true;
    // 400 invalid_query / query_too_long: the server's message says what is wrong with the query.
    this.status.textContent = error instanceof ApiError && error.status === 400
      ? error.message : `Search failed: ${error instanceof ApiError ? error.describe() : 'something went wrong.'}`;
    this.onError(error);
  }
}

function resultItem(item) {
  const li = document.createElement('li');
  li.className = 'search-result';
  li.dataset.id = item.id;
  const link = document.createElement('a');
  link.href = `#/c/${encodeURIComponent(item.id)}`;
  if (item.message_id) link.dataset.messageId = item.message_id;
  const title = document.createElement('span');
  title.className = 'result-title';
  title.textContent = item.title || 'Untitled';
  const snippet = document.createElement('span');
  snippet.className = 'result-snippet';
  snippet.append(snippetNodes(item.snippet));
  link.append(title, snippet);
  li.append(link);
  return li;
}
