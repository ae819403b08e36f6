// Parley's chat page: the entry point, which wires the model, the views and the controller. The model
// is conversation.js (the open conversation) and preferences.js; the views build DOM and raise intents;
// the controller, the only part that talks to the server (api.js), is this file's wiring and routes
// plus its parts: open-conversation.js (which conversation is shown), sending.js, reply.js (the followed
// reply), actions.js (each message's buttons), conversation-edits.js (model, settings, the "⋯" menu),
// changes.js (what live notifications mean), tools/catalogue.js and tools/approvals.js (the tools
// one may use, decisions on tool calls), attachments/attaching.js (the files attached to the next
// message), and surfaces/surface-board.js with surface-actions.js (interactive answers: A2UI surfaces
// and the actions their Buttons send). live.js is the tab's one event stream, transport only.
// The server renders Markdown and holds all state; this page shows it.
import { Api, ApiError } from './transport/api.js';
import { UserStream } from './transport/live.js';
import { startAccount } from './account/account.js';
import { ConversationList } from './sidebar/sidebar.js';
import { ConversationModel } from './chat/conversation.js';
import { TopBar } from './chat/topbar.js';
import { MessageList } from './chat/messages.js';
import { Composer } from './chat/composer.js';
import { Scroller } from './chat/scroller.js';
import { Drawer } from './sidebar/drawer.js';
import { replyFollower } from './chat/reply.js';
import { messageActions } from './chat/actions.js';
import { SettingsForm } from './chat/settings.js';
import { Transfer } from './sidebar/transfer.js';
import { ConversationSearch } from './sidebar/search.js';
import { followChanges } from './chat/changes.js';
import { Preferences } from './preferences/preferences.js';
import { PreferencesDialog } from './preferences/preferences-dialog.js';
import { EmptyState } from './chat/empty-state.js';
import { conversationShower } from './chat/open-conversation.js';
import { conversationEdits } from './chat/conversation-edits.js';
import { sender } from './chat/sending.js';
import { toolCatalogue } from './tools/catalogue.js';
import { toolApprovals } from './tools/approvals.js';
import { AttachmentTray } from './attachments/attachment-tray.js';
import { ImageViewer } from './attachments/image-viewer.js';
import { attaching } from './attachments/attaching.js';
import { SurfaceBoard } from './surfaces/surface-board.js';
import { surfaceActions } from './surfaces/surface-actions.js';

/** A hidden tab keeps its stream this long, then closes it and reopens it on return. */
const HIDDEN_TAB_CLOSE_MS = 60_000;

const $ = (id) => document.getElementById(id);
const ui = { app: $('app'), toggleSidebar: $('toggle-sidebar'), notice: $('route-notice'), announcer: $('announcer') };

function announce(text) {
  ui.announcer.textContent = text;
}

function describe(error) {
  return error instanceof ApiError ? error.describe() : 'Something went wrong.';
}

// MARK: - The model, and the controller's shared parts (each part below adds its own)

const model = new ConversationModel();
const preferences = new Preferences();
let offeredModels = [];
const page = {
  model, preferences, announce, describe, notice: ui.notice,
  live: new UserStream((name, data) => page.changes.apply(name, data)),
};

// MARK: - The views: they build DOM and raise intents, which go to the controller's parts

page.topbar = new TopBar({
  title: $('conversation-title'), model: $('model'), menuButton: $('conversation-actions'), menu: $('conversation-menu'),
  renameDialog: $('rename-dialog'), renameForm: $('rename-form'), renameInput: $('rename-input'),
  renameCancel: $('rename-cancel'), deleteDialog: $('delete-dialog'), deleteTitle: $('delete-title'),
}, {
  summary: () => model.conversation,
  onModel: (id) => page.edits.changeModel(id),
  onAction: (action, conversation) => page.edits.act(action, conversation),
  onRename: (id, title) => page.edits.rename(id, title),
  onDelete: (id) => page.edits.remove(id),
  onShown: () => page.attachments && page.attachments.modelShown(),
});
page.settings = new SettingsForm({
  toggle: $('system-toggle'), dialog: $('settings-dialog'), form: $('system-form'), prompt: $('system-prompt'), temperature: $('settings-temperature'),
  topP: $('settings-top-p'), maxTokens: $('settings-max-tokens'), usage: $('settings-usage'),
  toolsList: $('settings-tools-list'), toolsStatus: $('settings-tools-status'),
  status: $('system-status'), cancel: $('system-cancel'),
}, {
  model, describe, onSave: (fields) => page.edits.saveSettings(fields), onRead: () => page.edits.readSettings(),
  onTools: () => page.catalogue.load(),
});
page.emptyState = new EmptyState({
  model: $('empty-model'), hint: $('empty-hint'), examples: $('example-prompts'),
}, { onExample: (text) => page.composer.fill(text) });
page.messages = new MessageList({
  list: $('message-list'), empty: $('empty-state'), onAction: (...args) => page.actions.act(...args),
  titleOf: (id) => page.catalogue.titleOf(id),
});
page.composer = new Composer({
  form: $('composer'), input: $('input'), send: $('send'), stop: $('stop'),
  onSubmit: () => page.sending.sendFromComposer(), onStop: () => page.replies.stop(),
});
page.attachmentTray = new AttachmentTray({
  tray: $('attachment-tray'), button: $('attach'), input: $('attach-input'), dropZone: $('composer'), pasteTarget: $('input'),
}, {
  onFiles: (files) => page.attachments.add(files), onRemove: (key) => page.attachments.remove(key),
  onRetry: (key) => page.attachments.retry(key),
});
page.imageViewer = new ImageViewer({
  dialog: $('image-dialog'), title: $('image-dialog-title'), image: $('image-dialog-image'),
  download: $('image-dialog-download'), close: $('image-dialog-close'),
});
page.scroller = new Scroller({
  messages: $('messages'), list: $('message-list'), jump: $('jump-latest'), onJump: () => page.composer.focus(),
});
const drawer = new Drawer({
  app: ui.app, sidebar: $('sidebar'), scrim: $('scrim'), toggle: ui.toggleSidebar, first: $('new-conversation'),
});
page.conversations = new ConversationList({
  list: $('conversation-list'), pinnedList: $('pinned-list'), pinnedHeading: $('pinned-heading'),
  listHeading: $('list-heading'), sentinel: $('conversation-sentinel'), status: $('conversation-list-status'),
  retry: $('conversation-list-retry'), archivedToggle: $('show-archived'), scroller: document.querySelector('.conversation-nav'),
  loadPage: (limit, cursor, filters) => Api.listConversations(limit, cursor, filters),
  onMode: () => page.search.refresh(), onDelete: (id) => page.search.forget(id), onChange: (change) => page.search.update(change),
  onAction: (action, conversation) => page.edits.act(action, conversation),
});
page.search = new ConversationSearch({
  input: $('search'), results: $('search-results'), status: $('search-status'), listView: $('list-view'),
  find: (query, filters, signal) => Api.search(query, filters, signal),
  filters: () => (page.conversations.archived ? { archived: true } : {}), onError: () => {},
  onReveal: (messageId) => page.messages.reveal(messageId, () => page.scroller.measure()),
});
new PreferencesDialog({
  open: $('open-preferences'), dialog: $('preferences-dialog'), form: $('preferences-form'), model: $('preferences-model'),
  prompt: $('preferences-prompt'), status: $('preferences-status'), close: $('preferences-close'),
}, {
  preferences, models: () => offeredModels, describe,
  onOpen: () => page.loadPreferences(), onSave: (change) => savePreferences(change),
});
new Transfer({ exportAll: $('export-all'), file: $('import-file'), status: $('transfer-status') }, {
  exportAllURL: Api.exportAllURL(),
  importDocument: (text) => Api.importDocument(text),
  onImported(items) {
    for (const item of items) page.conversations.upsert(item);
    if (items.length === 1) location.hash = `#/c/${encodeURIComponent(items[0].id)}`;
  },
});

// MARK: - The controller's parts

Object.assign(page, conversationShower(page));
page.edits = conversationEdits(page);
page.surfaces = new SurfaceBoard({ list: $('message-list'), model, actions: surfaceActions(page) });
page.replies = replyFollower({
  ...page, regenerate: (id) => page.actions.regenerate(id), finished: () => page.settings.changedElsewhere(),
});
page.actions = messageActions(page);
page.catalogue = toolCatalogue(page);
page.approvals = toolApprovals(page);
page.changes = followChanges(page);
page.attachments = attaching(page);
page.sending = sender(page);

// MARK: - Models offered and preferences (theme, send key, defaults of new conversations)

async function loadModels() {
  try {
    const { models } = await Api.models();
    offeredModels = models || [];
    page.topbar.fillModels(models);
    page.topbar.selectModel(model.conversation ? model.conversation.model : page.topbar.preferredModel(preferences.defaultModel));
  } catch (error) {
    announce('Could not load the list of models.');
  }
  page.emptyState.showModel(page.topbar.labelOf(page.topbar.model));
}

/** Reads the preferences (at start, when another tab changed them, when the dialog opens). A failure
 *  keeps what is shown: the page works with the defaults. */
page.loadPreferences = async () => {
  try {
    preferences.take(await Api.preferences());
  } catch {
    // the defaults (or what was read before) stay
  }
};

/** Saves `change` (any of the four fields); throws the ApiError. */
async function savePreferences(change) {
  preferences.take(await Api.updatePreferences(change));
}

/** The preferences as read or saved: the send key at once, and a fresh page takes the defaults. */
preferences.onChange((values) => {
  page.composer.setSendKey(values.send_key);
  page.emptyState.showSendKey(values.send_key);
  if (!model.conversation) page.showDefaults();
});

page.ready = Promise.all([loadModels(), page.loadPreferences()]);

// MARK: - Routes, keys and the tab's visibility

window.addEventListener('hashchange', () => page.openRoute());

$('new-conversation').addEventListener('click', () => {
  drawer.setOpen(false);
  if (location.hash !== '#/') location.hash = '#/';
  else page.showFresh();
  page.composer.focus();
});

document.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape' || event.defaultPrevented) return;
  if (document.querySelector('dialog[open]')) return;
  if (model.streamingId) {
    event.preventDefault();
    page.replies.stop();
  } else if (drawer.isOpen) {
    drawer.setOpen(false);
    ui.toggleSidebar.focus();
  }
});

// A hidden tab closes its stream after a while and reopens it on return; a visible one re-reads.
let hiddenTimer = null;
document.addEventListener('visibilitychange', () => {
  if (document.hidden) {
    clearTimeout(hiddenTimer);
    hiddenTimer = setTimeout(() => page.live.suspend(), HIDDEN_TAB_CLOSE_MS);
    return;
  }
  clearTimeout(hiddenTimer);
  if (page.live.suspended) page.live.resume();
  else page.changes.refresh();
});

// Leaving the page (or entering the back/forward cache) drops the connection but keeps the place.
window.addEventListener('pagehide', () => page.live.suspend());
window.addEventListener('pageshow', (event) => {
  if (event.persisted && page.live.suspended) page.live.resume();
});

// MARK: - Start

startAccount({ app: ui.app, announce }).then((me) => {
  if (me) page.live.start();
});
page.composer.fit();
page.conversations.loadMore();
page.openRoute();
page.composer.focus();
