// Changes made in other tabs and on other devices, a part of the controller (app.js): what each live
// notification means (live.js only carries them) for the list, the search results, the preferences
// and the open conversation, and the re-read of the open conversation when one says its branch changed
// or the tab comes back to the front. Views only hear what to show.
import { Api } from '../transport/api.js';

/**
 * `page` gives the model, the views (`scroller`, `topbar`, `settings`, `conversations`, `search`) and
 * the controller's `render(conversation)`, `showFresh()`, `showNotice(text)` and `loadPreferences()`.
 * Returns `apply(name, data)` (the stream's notifications) and `refresh()` (reads the open
 * conversation again, one read at a time).
 */
export function followChanges(page) {
  const { model, scroller, topbar, settings, conversations, search } = page;

  /** Another tab may have changed the conversation while this one was in the background: re-render
   *  only when the branch or its last message differs from what is shown. */
  async function refreshIfChanged() {
    const current = model.conversation;
    if (!current || model.streamingId || model.sending) return;
    // An unsent message (with its Retry) stays until the person deals with it.
    if (model.hasUnsent()) return;
    try {
      const fresh = await Api.conversation(current.id);
      if (model.conversation !== current || model.streamingId || model.sending) return;
      if (model.differsFrom(fresh)) {
        const pinned = scroller.pinned;
        page.render(fresh);
        if (pinned) scroller.bottomNow();
        return;
      }
      const rest = model.refreshFields(fresh);
      settings.showConversation();
      if (rest.title !== current.title) {
        topbar.setHeading(rest.title || 'Untitled');
        conversations.rename(rest.id, rest.title || 'Untitled');
      }
      if (rest.model && rest.model !== topbar.model) topbar.selectModel(rest.model);
    } catch {
      // the next visit tries again
    }
  }

  let refreshing = false;
  let refreshAgain = false;

  /** One `refreshIfChanged` at a time; a change told meanwhile reads once more after it. */
  async function refresh() {
    if (refreshing) {
      refreshAgain = true;
      return;
    }
    refreshing = true;
    try {
      await refreshIfChanged();
    } finally {
      refreshing = false;
      if (refreshAgain) {
        refreshAgain = false;
        refresh();
      }
    }
  }

  /** The open conversation's title, model or branch changed elsewhere. */
  function updated(summary) {
    const branchChanged = model.applySummary(summary);
    topbar.showTitle(model.conversation.title);
    if (model.conversation.model) topbar.selectModel(model.conversation.model);
    settings.changedElsewhere();
    if (branchChanged) refresh();
  }

  /** The open conversation was deleted elsewhere. */
  function deleted() {
    page.showFresh();
    history.replaceState(null, '', '#/');
    page.showNotice('This conversation was deleted.');
  }

  /** What the stream's notification `name` means here. */
  function apply(name, data) {
    const id = data.conversation ? data.conversation.id : data.conversation_id;
    const shown = id !== undefined && id === model.openId;
    switch (name) {
      case 'conversation_created':
        conversations.upsert(data.conversation);
        break;
      case 'conversation_updated':
        conversations.update(data.conversation); // its title, and its group (pinned, archived)
        if (shown) updated(data.conversation);
        break;
      case 'conversation_deleted':
        conversations.deleted(id);
        if (shown) deleted();
        break;
      case 'turn':
      case 'reply_started':
        if (!conversations.bump(id)) Api.conversation(id).then((found) => conversations.upsert(found), () => {});
        if (shown) refresh();
        break;
      case 'reply_finished':
        // A reply the page shows ends through its own `done`; only one it has not got is read.
        if (shown && !model.messages.has(data.message_id)) refresh();
        break;
      case 'preferences_changed':
        // Another tab or device saved them: read and apply them here too (the event carries no values).
        page.loadPreferences();
        break;
      case 'resync':
        // Changes were missed: the list, the results of a search and the open conversation are read again.
        conversations.reload();
        search.refresh();
        refresh();
        break;
      default:
        break;
    }
  }

  return { apply, refresh };
}
