// The conversation list: pinned conversations first (a "Pinned" group, all loaded at once), then the
// rest newest first, loaded page by page (cursor) as the person scrolls. Archived conversations are
// left out; "Show archived" lists only them instead. Search (search.js) shows its results in place
// of this list. Each item (conversation-item.js) has the conversation's "⋯" menu and an "imported"
// badge for a conversation an import made. A view: the pages come from the controller
// (`loadPage`), never from a request made here.
import { dayGroup } from '../shared/times.js';
import { conversationItem, setItemTitle } from './conversation-item.js';

const PAGE_SIZE = 30;
/** Pinned conversations are few: loaded in pages of this size before the rest. */
const PINNED_PAGE_SIZE = 200;

export class ConversationList {
  /** `ui`: the lists, headings, status and its Retry button, sentinel, the "Show archived" button and
   *  the scrolling nav. `loadPage(limit, cursor, filters)` resolves to a page of the list
   *  ({items, next_cursor}) or throws. */
  constructor({
    list, pinnedList, pinnedHeading, listHeading, sentinel, status, retry, archivedToggle, scroller, loadPage, onError, onMode,
    onDelete, onChange, onAction,
  }) {
    Object.assign(this, { list, pinnedList, pinnedHeading, listHeading, sentinel, status, retry, archivedToggle, scroller, loadPage });
    this.onError = onError || (() => {});
    this.onMode = onMode || (() => {}); // the archived view switched on or off
    this.onDelete = onDelete || (() => {}); // a conversation was deleted
    this.onChange = onChange || (() => {}); // a conversation's title, pinned or archived changed (search follows)
    this.onAction = onAction || (() => {}); // an item of a conversation's menu was chosen (action, conversation)
    this.items = new Map(); // id -> li
    this.archived = false; // showing the archived conversations instead
    this.currentId = null;
    this.resetPaging();
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) this.loadMore();
    }, { root: scroller, rootMargin: '200px' });
    this.observer.observe(sentinel);
    archivedToggle.addEventListener('click', () => this.showArchived(!this.archived));
    // The observer fires only when the sentinel's visibility changes: a failed load of a short list
    // would stay failed. Retry (or the network coming back) tries again.
    retry.addEventListener('click', () => this.loadMore());
    window.addEventListener('online', () => {
      if (!retry.hidden) this.loadMore();
    });
  }

  resetPaging() {
    this.generation = (this.generation || 0) + 1; // answers of an earlier generation are dropped
    this.cursor = null;
    this.exhausted = false;
    this.loading = false;
    this.pinnedLoaded = false;
  }

  /** The filters of what is listed: the rest after the pinned ones, or only the archived. */
  get filters() {
    return this.archived ? { archived: true } : { pinned: false };
  }

  async loadMore() {
    if (this.loading || this.exhausted) return;
    this.loading = true;
    const generation = this.generation;
    this.status.textContent = 'Loading…';
    try {
      if (!this.archived && !this.pinnedLoaded) await this.loadPinned(generation);
      const page = await this.loadPage(PAGE_SIZE, this.cursor, this.filters);
      if (generation !== this.generation) return;
      for (const conversation of page.items || []) this.place(conversation, { append: true });
      this.cursor = page.next_cursor || null;
      this.exhausted = !this.cursor;
      this.loading = false;
      this.showState();
      this.hideRetry();
    } catch (error) {
      if (generation !== this.generation) return;
      this.loading = false;
      this.status.textContent = 'Could not load conversations.';
      this.retry.hidden = false;
      this.onError(error);
      return;
    }
    if (generation === this.generation) this.loadIfShort();
  }

  async loadPinned(generation) {
    let cursor = null;
    do {
      const page = await this.loadPage(PINNED_PAGE_SIZE, cursor, { pinned: true });
      if (generation !== this.generation) return;
      for (const conversation of page.items || []) this.place(conversation, { append: true });
      cursor = page.next_cursor || null;
    } while (cursor);
    this.pinnedLoaded = true;
  }

  /** Hides Retry once a load worked; the focus it had goes to the first conversation (or the search box). */
  hideRetry() {
    if (this.retry.hidden) return;
    const focused = document.activeElement === this.retry;
    this.retry.hidden = true;
    if (!focused) return;
    const first = this.pinnedList.querySelector('a') || this.list.querySelector('a');
    (first || document.getElementById('search')).focus();
  }

  /** Keeps loading while the sentinel is still in view (a short list). */
  loadIfShort() {
    if (this.exhausted || this.loading || this.sentinel.offsetParent === null) return;
    const box = this.scroller.getBoundingClientRect();
    const mark = this.sentinel.getBoundingClientRect();
    if (mark.top < box.bottom + 200) this.loadMore();
  }

  /** Lists the archived conversations (true) or the others (false). */
  showArchived(on) {
    this.archived = on;
    this.archivedToggle.setAttribute('aria-pressed', String(on));
    // Seen, not only heard (aria-pressed): the button says whether it is on.
    this.archivedToggle.querySelector('.toggle-state').textContent = on ? 'On' : 'Off';
    this.reload();
    this.onMode(on);
  }

  /** The list a conversation belongs in now, or null when this view leaves it out. */
  groupFor(conversation) {
    if (this.archived) return conversation.archived ? this.list : null;
    if (conversation.archived) return null;
    return conversation.pinned ? this.pinnedList : this.list;
  }

  /**
   * Puts a conversation where it belongs: `top` (it was just created or had a turn), `append` (a page
   * being loaded, already in order), else by `updated_at` among those listed (pinned or archived:
   * the order stays that of the last change). One the view leaves out is removed.
   */
  place(conversation, { top = false, append = false } = {}) {
    // A page being loaded says nothing new; anything else may be a change the search results follow.
    if (!append) this.onChange(conversation);
    const group = this.groupFor(conversation);
    let li = this.items.get(conversation.id);
    if (!group) {
      if (li) this.remove(conversation.id);
      return;
    }
    if (li) {
      if (conversation.title !== undefined) setItemTitle(li, conversation.title);
      if (conversation.pinned !== undefined) li.summary.pinned = conversation.pinned === true;
      if (conversation.archived !== undefined) li.summary.archived = conversation.archived === true;
      if (li.parentElement === group && !top) return;
    } else {
      li = conversationItem(conversation, { current: conversation.id === this.currentId, onAction: this.onAction });
      this.items.set(conversation.id, li);
    }
    li.dataset.updated = top ? new Date().toISOString() : (conversation.updated_at || '');
    if (top) {
      group.prepend(li);
    } else if (append) {
      group.append(li);
    } else {
      const after = [...group.children].find((other) => other !== li && other.dataset.updated < li.dataset.updated);
      if (after) {
        group.insertBefore(li, after);
      } else if (group === this.list && !this.exhausted) {
        // Older than every conversation loaded: a later page brings it.
        li.remove();
        this.items.delete(conversation.id);
      } else {
        group.append(li);
      }
    }
    this.showState();
  }

  /** Adds or moves a conversation to the top of its group (it was just created or updated). */
  upsert(conversation) {
    this.place(conversation, { top: true });
  }

  /** A conversation's summary changed (title, pinned, archived): it moves if its group changed. */
  update(conversation) {
    this.place(conversation);
  }

  /** Moves a listed conversation to the top of its group (a turn in another tab); false when it is
   *  not listed. */
  bump(id) {
    const li = this.items.get(id);
    if (!li) return false;
    li.dataset.updated = new Date().toISOString();
    li.parentElement.prepend(li);
    this.showDayGroups();
    return true;
  }

  /** Loads the list again from the first page (this tab missed changes, or the view changed). */
  reload() {
    this.items.clear();
    this.list.replaceChildren();
    this.pinnedList.replaceChildren();
    this.resetPaging();
    this.showState();
    this.loadMore();
  }

  /** A conversation was deleted: it leaves the list (and, through `onDelete`, the search results). */
  deleted(id) {
    this.remove(id);
    this.onDelete(id);
  }

  rename(id, title) {
    const li = this.items.get(id);
    if (li) setItemTitle(li, title);
    this.onChange({ id, title });
  }

  remove(id) {
    const li = this.items.get(id);
    if (li) li.remove();
    this.items.delete(id);
    this.showState();
  }

  markCurrent(id) {
    this.currentId = id;
    for (const [itemId, li] of this.items) {
      const link = li.firstElementChild;
      if (itemId === id) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
  }

  /** Day groups of the list (newest first, so each group is a run): the first item of each run names
   *  it (Today, Yesterday, Previous 7 days, Older), shown by app.css; times are the person's local
   *  time zone's. */
  showDayGroups(now = new Date()) {
    let previous = null;
    const today = now.toDateString();
    for (const li of this.list.children) {
      // Worked out once per item and day: this runs after every change to the list.
      const key = `${today} ${li.dataset.updated}`;
      if (li.dayGroupKey !== key) {
        li.dayGroupKey = key;
        li.dayGroup = dayGroup(li.dataset.updated, now);
      }
      const group = li.dayGroup;
      if (group !== previous) li.dataset.group = group;
      else delete li.dataset.group;
      previous = group;
    }
  }

  /** Headings (only when there is a Pinned group to tell apart, or the archived view) and status. */
  showState() {
    const pinned = !this.archived && this.pinnedList.children.length > 0;
    this.pinnedList.hidden = !pinned;
    this.pinnedHeading.hidden = !pinned;
    this.listHeading.textContent = this.archived ? 'Archived' : 'Recent';
    this.listHeading.hidden = !this.archived && !pinned;
    this.showDayGroups();
    if (this.loading) return;
    const empty = this.list.children.length === 0 && !pinned;
    if (empty && this.exhausted) {
      this.status.textContent = this.archived ? 'No archived conversations.' : 'No conversations yet.';
    } else {
      this.status.textContent = '';
    }
  }
}
