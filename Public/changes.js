// Changes made in other tabs and on other devices, a part of the controller (app.js): the live
// notifications (live.js tells what they mean for the list, the search results and the open
// conversation), and the re-read of the open conversation when one says its branch changed or the tab
// comes back to the front.
import { Api } from './api.js';
import { applyNotifications } from './live.js';

/**
 * `page` gives the model, the views (`scroller`, `topbar`, `settings`, `organise`, `conversations`,
 * `search`), the `preferences` and the controller's `render(conversation)`, `showFresh()` and `showNotice(text)`.
 * Returns `apply(name, data)` (the stream's notifications) and `refresh()` (reads the open
 * conversation again, one read at a time).
 */
export function followChanges(page) {
  const { model, scroller, topbar, settings, organise, conversations, search } = page;

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

  const apply = applyNotifications({
    conversations,
    search,
    openId: () => model.openId,
    hasMessage: (id) => model.messages.has(id),
    refresh,
    preferencesChanged: () => page.preferences.load(),
    updated(summary) {
      const branchChanged = model.applySummary(summary);
      Object.assign(model.conversation, { pinned: summary.pinned, archived: summary.archived });
      organise.show(model.conversation);
      topbar.showTitle(model.conversation.title);
      if (model.conversation.model) topbar.selectModel(model.conversation.model);
      settings.changedElsewhere();
      if (branchChanged) refresh();
    },
    deleted() {
      page.showFresh();
      history.replaceState(null, '', '#/');
      page.showNotice('This conversation was deleted.');
    },
  });

  return { apply, refresh };
}
