// The conversation list: newest first, loaded page by page (cursor) as the person scrolls,
// filtered by title with the search box.
import { Api } from './api.js';

const PAGE_SIZE = 30;

export class ConversationList {
  constructor({ list, sentinel, status, search, scroller, onError }) {
    this.list = list;
    this.sentinel = sentinel;
    this.status = status;
    this.search = search;
    this.scroller = scroller;
    this.onError = onError;
    this.items = new Map(); // id -> li
    this.cursor = null;
    this.exhausted = false;
    this.loading = false;
    this.currentId = null;
    this.query = '';
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) this.loadMore();
    }, { root: scroller, rootMargin: '200px' });
    this.observer.observe(sentinel);
    search.addEventListener('input', () => {
      this.query = search.value.trim().toLowerCase();
      this.applyFilter();
      this.loadIfShort();
    });
  }

  async loadMore() {
    if (this.loading || this.exhausted) return;
    this.loading = true;
    this.status.textContent = 'Loading…';
    try {
      const page = await Api.listConversations(PAGE_SIZE, this.cursor);
      const fragment = document.createDocumentFragment();
      for (const conversation of page.items || []) {
        if (!this.items.has(conversation.id)) fragment.append(this.itemFor(conversation));
      }
      this.list.append(fragment);
      this.cursor = page.next_cursor || null;
      this.exhausted = !this.cursor;
      this.status.textContent = '';
      this.loading = false; // before applyFilter, which says nothing while a page is loading
      this.applyFilter();
    } catch (error) {
      this.status.textContent = 'Could not load conversations.';
      this.onError(error);
    } finally {
      this.loading = false;
    }
    this.loadIfShort();
  }

  /** Keeps loading while the sentinel is still in view (short list or a narrow filter). */
  loadIfShort() {
    if (this.exhausted || this.loading) return;
    const box = this.scroller.getBoundingClientRect();
    const mark = this.sentinel.getBoundingClientRect();
    if (mark.top < box.bottom + 200) this.loadMore();
  }

  itemFor(conversation) {
    const li = document.createElement('li');
    const link = document.createElement('a');
    link.href = `#/c/${encodeURIComponent(conversation.id)}`;
    link.textContent = conversation.title || 'Untitled';
    link.title = conversation.title || 'Untitled';
    if (conversation.id === this.currentId) link.setAttribute('aria-current', 'page');
    li.append(link);
    li.dataset.id = conversation.id;
    li.dataset.title = (conversation.title || '').toLowerCase();
    this.items.set(conversation.id, li);
    return li;
  }

  /** Adds or moves a conversation to the top (it was just created or updated). */
  upsert(conversation) {
    const old = this.items.get(conversation.id);
    if (old) {
      this.items.delete(conversation.id);
      old.remove();
    }
    this.list.prepend(this.itemFor(conversation));
    this.applyFilter();
  }

  /** Moves a listed conversation to the top (a turn in another tab); false when it is not listed. */
  bump(id) {
    const li = this.items.get(id);
    if (!li) return false;
    this.list.prepend(li);
    return true;
  }

  /** Loads the list again from the first page (this tab missed changes). */
  reload() {
    this.items.clear();
    this.list.replaceChildren();
    this.cursor = null;
    this.exhausted = false;
    this.loadMore();
  }

  rename(id, title) {
    const li = this.items.get(id);
    if (!li) return;
    const link = li.firstElementChild;
    link.textContent = title;
    link.title = title;
    li.dataset.title = title.toLowerCase();
    this.applyFilter();
  }

  remove(id) {
    const li = this.items.get(id);
    if (li) li.remove();
    this.items.delete(id);
    this.applyFilter();
  }

  markCurrent(id) {
    this.currentId = id;
    for (const [itemId, li] of this.items) {
      const link = li.firstElementChild;
      if (itemId === id) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
  }

  applyFilter() {
    let shown = 0;
    for (const li of this.items.values()) {
      const match = this.query === '' || li.dataset.title.includes(this.query);
      li.hidden = !match;
      if (match) shown += 1;
    }
    if (this.loading) return;
    if (shown === 0 && this.exhausted) {
      this.status.textContent = this.query ? 'No conversation matches.' : 'No conversations yet.';
    } else {
      this.status.textContent = '';
    }
  }
}
