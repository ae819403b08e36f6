// Parley's chat page: the controller. It wires the conversation model (conversation.js), the views
// (top bar, message list, composer, drawer, conversation list) and the tab's single live stream
// (live.js: the user's notifications and the followed reply; changes.js applies other tabs' changes).
// The server renders Markdown and holds all state; this page shows it.
import { Api, ApiError } from './api.js';
import { UserStream } from './live.js';
import { startAccount } from './account.js';
import { ConversationList } from './sidebar.js';
import { ConversationModel, titleFrom } from './conversation.js';
import { TopBar } from './topbar.js';
import { MessageList } from './messages.js';
import { Composer } from './composer.js';
import { Scroller } from './scroller.js';
import { Drawer } from './drawer.js';
import { showError, clearError, setStatusText } from './view.js';
import { replyFollower } from './reply.js';
import { messageActions } from './actions.js';
import { SettingsForm } from './settings.js';
import { Transfer } from './transfer.js';
import { ConversationSearch } from './search.js';
import { Organiser } from './organise.js';
import { followChanges } from './changes.js';
import { Preferences } from './preferences.js';
import { PreferencesDialog } from './preferences-dialog.js';
import { EmptyState } from './empty-state.js';

/** A hidden tab keeps its stream this long, then closes it and reopens it on return. */
const HIDDEN_TAB_CLOSE_MS = 60_000;

const $ = (id) => document.getElementById(id);
const ui = { app: $('app'), toggleSidebar: $('toggle-sidebar'), notice: $('route-notice'), announcer: $('announcer') };

const model = new ConversationModel();
const preferences = new Preferences();
let offeredModels = [];
const live = new UserStream((name, data) => changes.apply(name, data));

const topbar = new TopBar({
  title: $('conversation-title'), model: $('model'), menuButton: $('conversation-actions'), menu: $('conversation-menu'),
  renameDialog: $('rename-dialog'), renameForm: $('rename-form'), renameInput: $('rename-input'),
  renameCancel: $('rename-cancel'), deleteDialog: $('delete-dialog'), deleteTitle: $('delete-title'),
}, {
  summary: () => model.conversation,
  onModel: changeModel,
  onAction: conversationAction,
  onRename: rename,
  onDelete: deleteConversation,
});
const settings = new SettingsForm({
  toggle: $('system-toggle'), dialog: $('settings-dialog'), form: $('system-form'), prompt: $('system-prompt'), temperature: $('settings-temperature'),
  topP: $('settings-top-p'), maxTokens: $('settings-max-tokens'), usage: $('settings-usage'),
  status: $('system-status'), cancel: $('system-cancel'),
}, { model, describe });
const emptyState = new EmptyState({
  model: $('empty-model'), hint: $('empty-hint'), examples: $('example-prompts'),
}, { onExample: (text) => composer.fill(text) });
const messages = new MessageList({ list: $('message-list'), empty: $('empty-state'), onAction: (...args) => actions.act(...args) });
const composer = new Composer({
  form: $('composer'), input: $('input'), send: $('send'), stop: $('stop'),
  onSubmit: sendFromComposer, onStop: () => replies.stop(),
});
const scroller = new Scroller({
  messages: $('messages'), list: $('message-list'), jump: $('jump-latest'), onJump: () => composer.focus(),
});
const drawer = new Drawer({
  app: ui.app, sidebar: $('sidebar'), scrim: $('scrim'), toggle: ui.toggleSidebar, first: $('new-conversation'),
});
const conversations = new ConversationList({
  list: $('conversation-list'), pinnedList: $('pinned-list'), pinnedHeading: $('pinned-heading'),
  listHeading: $('list-heading'), sentinel: $('conversation-sentinel'), status: $('conversation-list-status'),
  retry: $('conversation-list-retry'), archivedToggle: $('show-archived'), scroller: document.querySelector('.conversation-nav'),
  onMode: () => search.refresh(), onDelete: (id) => search.forget(id), onChange: (change) => search.update(change),
  onAction: conversationAction,
});
const search = new ConversationSearch({
  input: $('search'), results: $('search-results'), status: $('search-status'), listView: $('list-view'),
  filters: () => (conversations.archived ? { archived: true } : {}), onError: () => {},
  onReveal: (messageId) => messages.reveal(messageId, () => scroller.measure()),
});
const organise = new Organiser({ model, conversations, announce });
const replies = replyFollower({
  model, messages, composer, scroller, live, announce, describe, regenerate: (id) => actions.regenerate(id),
  finished: () => settings.changedElsewhere(),
});
const actions = messageActions({
  model, messages, composer, scroller, live, replies, announce, describe, conversations,
  render: renderConversation, replaceFrom, touch: touchConversation,
});
const changes = followChanges({
  model, scroller, topbar, settings, organise, conversations, search, preferences, render: renderConversation, showFresh,
  showNotice,
});
new PreferencesDialog({
  open: $('open-preferences'), dialog: $('preferences-dialog'), form: $('preferences-form'), model: $('preferences-model'),
  prompt: $('preferences-prompt'), status: $('preferences-status'), close: $('preferences-close'),
}, { preferences, models: () => offeredModels, describe });

const preferencesReady = preferences.load();
const modelsReady = loadModels();
let hiddenTimer = null;

function announce(text) {
  ui.announcer.textContent = text;
}

function describe(error) {
  return error instanceof ApiError ? error.describe() : 'Something went wrong.';
}

/** Marks the open conversation (null: none) in the list and among the search results. */
function markCurrent(id) {
  conversations.markCurrent(id);
  search.markCurrent(id);
}

function showNotice(text) {
  ui.notice.textContent = text;
  ui.notice.hidden = false;
  announce(text);
}

// MARK: - Models and conversation settings

async function loadModels() {
  try {
    const { models } = await Api.models();
    offeredModels = models || [];
    topbar.fillModels(models);
    topbar.selectModel(model.conversation ? model.conversation.model : topbar.preferredModel(preferences.defaultModel));
  } catch (error) {
    announce('Could not load the list of models.');
  }
  emptyState.showModel(topbar.labelOf(topbar.model));
}

// MARK: - Preferences (theme, send key, defaults of new conversations)

/** The preferences as read or saved: the send key at once, and a fresh page takes the defaults. */
preferences.onChange((values) => {
  composer.setSendKey(values.send_key);
  emptyState.showSendKey(values.send_key);
  if (!model.conversation) showDefaults();
});

/** A fresh page's model and system prompt: the person's defaults, unless they chose others for it. */
function showDefaults() {
  if (Object.keys(model.pendingSettings).length === 0 && preferences.defaultSystemPrompt) {
    model.pendingSettings = { system_prompt: preferences.defaultSystemPrompt };
  }
  topbar.selectModel(topbar.preferredModel(preferences.defaultModel));
  emptyState.showModel(topbar.labelOf(topbar.model));
}

async function changeModel(id) {
  emptyState.showModel(topbar.labelOf(id));
  if (!model.conversation) return;
  try {
    model.conversation = await Api.updateConversation(model.conversation.id, { model: id });
    announce(`Model set to ${id}.`);
  } catch (error) {
    announce(`Could not change the model: ${describe(error)}`);
  }
}

// MARK: - A conversation's "⋯" menu (the top bar's or a list item's)

/** `conversation`: {id, title, pinned, archived}, the open one or any listed. Export items are links. */
function conversationAction(action, conversation) {
  switch (action) {
    case 'pin': organise.toggle(conversation, 'pinned'); break;
    case 'archive': organise.toggle(conversation, 'archived'); break;
    case 'rename': topbar.askRename(conversation); break;
    case 'delete': topbar.askDelete(conversation); break;
    default: break;
  }
}

async function rename(id, title) {
  try {
    const renamed = await Api.updateConversation(id, { title });
    if (model.openId === id) {
      model.conversation = renamed;
      topbar.showTitle(renamed.title);
    }
    conversations.rename(id, renamed.title);
    announce('Conversation renamed.');
  } catch (error) {
    announce(`Could not rename: ${describe(error)}`);
  }
}

async function deleteConversation(id) {
  try {
    await Api.deleteConversation(id);
    conversations.deleted(id);
    announce('Conversation deleted.');
    if (model.openId === id) location.hash = '#/';
  } catch (error) {
    announce(`Could not delete: ${describe(error)}`);
  }
}

$('new-conversation').addEventListener('click', () => {
  drawer.setOpen(false);
  if (location.hash !== '#/') location.hash = '#/';
  else showFresh();
  composer.focus();
});

// MARK: - Showing a conversation

function routeId() {
  const match = location.hash.match(/^#\/c\/([^/?#]+)/);
  return match ? decodeURIComponent(match[1]) : null;
}

function showFresh() {
  model.loadSequence += 1;
  live.close();
  model.clear();
  messages.clear();
  ui.notice.hidden = true;
  topbar.showFresh();
  settings.showFresh();
  organise.show(null);
  showDefaults();
  markCurrent(null);
  document.title = 'Parley';
  composer.showStreaming(false);
}

async function openRoute() {
  const id = routeId();
  if (!id) {
    showFresh();
    return;
  }
  if (model.openId === id) return;
  const sequence = ++model.loadSequence;
  live.close();
  model.streamingId = null;
  // Until it is shown, the actions (export, rename, delete, pin, archive) would act on the one before.
  topbar.showActions(false);
  organise.show(null);
  try {
    const conversation = await Api.conversation(id);
    if (sequence !== model.loadSequence) return;
    renderConversation(conversation);
    scroller.bottomNow();
  } catch (error) {
    if (sequence !== model.loadSequence || (error instanceof ApiError && error.status === 401)) return;
    showFresh();
    history.replaceState(null, '', '#/');
    showNotice(error instanceof ApiError && error.status === 404
      ? 'Conversation not found: it does not exist, or it is not yours.' : `Could not open the conversation: ${describe(error)}`);
  }
}

window.addEventListener('hashchange', openRoute);

/** Renders a whole branch in one fragment (one layout), then follows its running answer if any. */
function renderConversation(conversation) {
  performance.mark('parley-render-start');
  live.close();
  const { shown, streaming } = model.load(conversation);
  const rest = model.conversation;
  messages.show(shown);
  topbar.showTitle(rest.title);
  topbar.showActions(true, rest.id);
  organise.show(rest);
  topbar.selectModel(rest.model);
  settings.showConversation();
  markCurrent(rest.id);
  for (const message of shown) {
    if (message.error && message.status !== 'streaming') replies.showServerError(message);
  }
  performance.mark('parley-render-end');
  performance.measure('parley-render', 'parley-render-start', 'parley-render-end');
  if (streaming) replies.follow(streaming.id);
  composer.showStreaming(model.streamingId !== null);
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

function touchConversation(leafId) {
  if (!model.moveLeaf(leafId)) return;
  conversations.upsert(model.conversation);
  markCurrent(model.conversation.id);
}

// MARK: - Composer

document.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape' || event.defaultPrevented) return;
  if (document.querySelector('dialog[open]')) return;
  if (model.streamingId) {
    event.preventDefault();
    replies.stop();
  } else if (drawer.isOpen) {
    drawer.setOpen(false);
    ui.toggleSidebar.focus();
  }
});

function sendFromComposer() {
  const text = composer.text;
  if (!text.trim() || model.streamingId || model.sending) return;
  composer.clear();
  send(text, null);
}

/** Sends `text`; on failure it stays on the page as a failed message with Retry. */
async function send(text, failedEl) {
  model.sending = true;
  try {
    if (!model.conversation) {
      await Promise.all([modelsReady, preferencesReady]);
      const fields = { title: titleFrom(text) };
      if (topbar.model) fields.model = topbar.model;
      Object.assign(fields, model.pendingFields());
      const created = await Api.createConversation(fields);
      model.created(created);
      history.pushState(null, '', `#/c/${encodeURIComponent(created.id)}`);
      topbar.showTitle(created.title);
      topbar.showActions(true, created.id);
      organise.show(created);
    }
    const conversationId = model.conversation.id;
    const result = await Api.postMessage(conversationId, { content: text });
    if (model.openId !== conversationId) return;
    if (failedEl) failedEl.remove();
    appendMessages([result.user_message, result.assistant_message]);
    touchConversation(result.assistant_message.id);
    scroller.bottomNow();
    replies.follow(result.assistant_message.id);
  } catch (error) {
    if (!model.conversation) settings.refusedOnCreate(error);
    showFailedSend(text, error, failedEl);
  } finally {
    model.sending = false;
  }
}

function showFailedSend(text, error, failedEl) {
  let el = failedEl;
  if (!el) {
    const message = model.unsent(text);
    appendMessages([message]);
    el = messages.elementFor(message.id);
    setStatusText(el, 'Not sent');
  }
  showError(el, `Not sent: ${describe(error)}`, () => {
    clearError(el);
    send(text, el);
  });
  announce(`The message was not sent. ${describe(error)}`);
  scroller.bottomNow();
}

// MARK: - Tab visibility: close the stream when hidden for long, reopen on return

document.addEventListener('visibilitychange', () => {
  if (document.hidden) {
    clearTimeout(hiddenTimer);
    hiddenTimer = setTimeout(() => live.suspend(), HIDDEN_TAB_CLOSE_MS);
    return;
  }
  clearTimeout(hiddenTimer);
  if (live.suspended) live.resume();
  else changes.refresh();
});

// Leaving the page (or entering the back/forward cache) drops the connection but keeps the place.
window.addEventListener('pagehide', () => live.suspend());
window.addEventListener('pageshow', (event) => {
  if (event.persisted && live.suspended) live.resume();
});

// MARK: - Export all and Import (transfer.js)

new Transfer({ exportAll: $('export-all'), file: $('import-file'), status: $('transfer-status') }, {
  onImported(items) {
    for (const item of items) conversations.upsert(item);
    if (items.length === 1) location.hash = `#/c/${encodeURIComponent(items[0].id)}`;
  },
});

// MARK: - Start

startAccount({ app: ui.app, announce }).then((me) => {
  if (me) live.start();
});
composer.fit();
conversations.loadMore();
openRoute();
composer.focus();
