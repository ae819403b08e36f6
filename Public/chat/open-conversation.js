// Which conversation the page shows, a part of the controller (app.js): the route (`#/c/{id}` or a
// fresh page), loading a conversation and rendering its branch in one go, the fresh page with the
// person's defaults, and keeping the model and the message list in step when messages are added or
// replaced. Requests here are the conversation's read; everything else is the model and the views.
import { Api, ApiError } from '../transport/api.js';

/** The conversation id in the address, or null (a fresh page). */
function routeId() {
  const match = location.hash.match(/^#\/c\/([^/?#]+)/);
  return match ? decodeURIComponent(match[1]) : null;
}

/**
 * `page` gives the model, `preferences`, `live`, the views (`messages`, `topbar`, `settings`,
 * `emptyState`, `composer`, `scroller`, `conversations`, `search`, `notice`), `replies` (reply.js, read
 * when used), `announce(text)` and `describe(error)`.
 */
export function conversationShower(page) {
  const { model, preferences, live, messages, topbar, settings, emptyState, composer, scroller, conversations, search } = page;

  /** Marks the open conversation (null: none) in the list and among the search results. */
  function markCurrent(id) {
    conversations.markCurrent(id);
    search.markCurrent(id);
  }

  function showNotice(text) {
    page.notice.textContent = text;
    page.notice.hidden = false;
    page.announce(text);
  }

  /** A fresh page's model and system prompt: the person's defaults, unless they chose others for it. */
  function showDefaults() {
    model.offerDefaultPrompt(preferences.defaultSystemPrompt);
    topbar.selectModel(topbar.preferredModel(preferences.defaultModel));
    emptyState.showModel(topbar.labelOf(topbar.model));
  }

  function showFresh() {
    live.close();
    model.clear();
    messages.clear();
    page.notice.hidden = true;
    topbar.showFresh();
    settings.showFresh();
    showDefaults();
    markCurrent(null);
    document.title = 'Parley';
    composer.showStreaming(false);
  }

  /** Shows what the address names: a conversation (read from the server) or a fresh page. */
  async function openRoute() {
    const id = routeId();
    if (!id) {
      showFresh();
      return;
    }
    if (model.openId === id) return;
    const sequence = model.startLoad();
    live.close();
    // Until it is shown, the actions (export, rename, delete, pin, archive) would act on the one before.
    topbar.showActions(false);
    try {
      const conversation = await Api.conversation(id);
      if (!model.isCurrentLoad(sequence)) return;
      render(conversation);
      scroller.bottomNow();
    } catch (error) {
      if (!model.isCurrentLoad(sequence) || (error instanceof ApiError && error.status === 401)) return;
      showFresh();
      history.replaceState(null, '', '#/');
      showNotice(error instanceof ApiError && error.status === 404
        ? 'Conversation not found: it does not exist, or it is not yours.' : `Could not open the conversation: ${page.describe(error)}`);
    }
  }

  /** Renders a whole branch in one fragment (one layout), then follows its running answer if any. */
  function render(conversation) {
    performance.mark('parley-render-start');
    live.close();
    const { shown, streaming } = model.load(conversation);
    const rest = model.conversation;
    messages.show(shown);
    topbar.showTitle(rest.title);
    topbar.showActions(true, rest.id);
    topbar.selectModel(rest.model);
    settings.showConversation();
    markCurrent(rest.id);
    for (const message of shown) {
      if (message.error && message.status !== 'streaming') page.replies.showServerError(message);
    }
    performance.mark('parley-render-end');
    performance.measure('parley-render', 'parley-render-start', 'parley-render-end');
    if (streaming) page.replies.follow(streaming.id);
    composer.showStreaming(model.streamingId !== null);
  }

  /** The conversation the first send just created: open, without a reload. */
  function showCreated(created) {
    model.created(created);
    history.pushState(null, '', `#/c/${encodeURIComponent(created.id)}`);
    topbar.showTitle(created.title);
    topbar.showActions(true, created.id);
  }

  function appendMessages(list) {
    model.add(list);
    messages.append(list);
  }

  /** Removes `el` and everything after it, then appends `list` (regenerate, edit). */
  function replaceFrom(el, list) {
    for (const id of messages.removeFrom(el)) model.forget(id);
    appendMessages(list);
  }

  /** The open conversation's branch now ends at `leafId`: it moves to the top of the list. */
  function touch(leafId) {
    if (!model.moveLeaf(leafId)) return;
    conversations.upsert(model.conversation);
    markCurrent(model.conversation.id);
  }

  return { showFresh, showDefaults, showNotice, openRoute, render, showCreated, appendMessages, replaceFrom, touch };
}
