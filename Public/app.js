// Parley's chat page: wiring of the conversation list, the message view, the composer and the
// tab's single live stream (live.js: the user's notifications and the followed reply). The server
// renders Markdown and holds all state; this page shows it.
import { Api, ApiError } from './api.js';
import { UserStream, applyNotifications } from './live.js';
import { copyText } from './clipboard.js';
import { startAccount } from './account.js';
import { ConversationList } from './sidebar.js';
import {
  createMessageElement, updateMeta, setHTML, setBlocks, putBlock, setTail, appendTail, applyPatch, shownHTML,
  blockCount, showError, clearError, errorText, setStatusText, setReasoning, appendReasoning, shownReasoning,
  syncReasoning,
} from './view.js';

/** A hidden tab keeps its stream this long, then closes it and reopens it on return. */
const HIDDEN_TAB_CLOSE_MS = 60_000;
/** Within this many pixels of the bottom the view counts as pinned. */
const PIN_THRESHOLD_PX = 48;
const TITLE_LENGTH = 60;

const $ = (id) => document.getElementById(id);
const ui = {
  app: $('app'),
  sidebar: $('sidebar'),
  scrim: $('scrim'),
  toggleSidebar: $('toggle-sidebar'),
  newConversation: $('new-conversation'),
  title: $('conversation-title'),
  model: $('model'),
  systemToggle: $('system-toggle'),
  systemForm: $('system-form'),
  systemPrompt: $('system-prompt'),
  systemCancel: $('system-cancel'),
  systemStatus: $('system-status'),
  rename: $('rename'),
  remove: $('delete'),
  messages: $('messages'),
  list: $('message-list'),
  empty: $('empty-state'),
  notice: $('route-notice'),
  jump: $('jump-latest'),
  composer: $('composer'),
  input: $('input'),
  send: $('send'),
  stop: $('stop'),
  announcer: $('announcer'),
  renameDialog: $('rename-dialog'),
  renameForm: $('rename-form'),
  renameInput: $('rename-input'),
  renameCancel: $('rename-cancel'),
  deleteDialog: $('delete-dialog'),
  deleteTitle: $('delete-title'),
};

const state = {
  conversation: null, // the open conversation, without its messages
  messages: new Map(), // id -> message shown in the view
  streamingId: null, // the assistant message this tab is following
  pinned: true,
  sending: false,
  pendingSystemPrompt: '', // for the conversation the first message will create
  loadSequence: 0,
  localSequence: 0,
};

const live = new UserStream((name, data) => applyChange(name, data));
const modelsReady = loadModels();
let hiddenTimer = null;

const conversations = new ConversationList({
  list: $('conversation-list'),
  sentinel: $('conversation-sentinel'),
  status: $('conversation-list-status'),
  search: $('search'),
  scroller: document.querySelector('.conversation-nav'),
  onError: () => {},
});

// MARK: - Small helpers

function announce(text) {
  ui.announcer.textContent = text;
}

function elementFor(id) {
  return ui.list.querySelector(`.message[data-id="${CSS.escape(id)}"]`);
}

function titleFrom(text) {
  const line = text.trim().split('\n')[0].trim();
  return line.length > TITLE_LENGTH ? `${line.slice(0, TITLE_LENGTH - 1)}…` : line || 'New conversation';
}

function describe(error) {
  return error instanceof ApiError ? error.describe() : 'Something went wrong.';
}

// MARK: - Scrolling: pinned to the bottom until the person scrolls up

let stickScheduled = false;

function distanceFromBottom() {
  return ui.messages.scrollHeight - ui.messages.scrollTop - ui.messages.clientHeight;
}

ui.messages.addEventListener('scroll', () => {
  state.pinned = distanceFromBottom() < PIN_THRESHOLD_PX;
  if (state.pinned) ui.jump.hidden = true;
}, { passive: true });

function stickToBottom() {
  if (stickScheduled) return;
  stickScheduled = true;
  requestAnimationFrame(() => {
    stickScheduled = false;
    if (state.pinned) ui.messages.scrollTop = ui.messages.scrollHeight;
    else ui.jump.hidden = false;
  });
}

// Whatever changes the list's height (a streamed block, a late layout of a long branch), a pinned
// view follows it; this runs after layout, so it costs no extra forced reflow.
new ResizeObserver(() => {
  if (state.pinned) ui.messages.scrollTop = ui.messages.scrollHeight;
}).observe(ui.list);

function scrollToBottomNow() {
  state.pinned = true;
  ui.jump.hidden = true;
  ui.messages.scrollTop = ui.messages.scrollHeight;
}

ui.jump.addEventListener('click', () => {
  scrollToBottomNow();
  ui.input.focus();
});

// MARK: - Models and conversation settings

async function loadModels() {
  try {
    const { models } = await Api.models();
    const fragment = document.createDocumentFragment();
    for (const model of models || []) {
      const option = document.createElement('option');
      option.value = model.id;
      option.textContent = model.label || model.id;
      fragment.append(option);
    }
    ui.model.replaceChildren(fragment);
    selectModel(state.conversation ? state.conversation.model : preferredModel());
  } catch (error) {
    announce('Could not load the list of models.');
  }
}

function preferredModel() {
  let saved = null;
  try {
    saved = localStorage.getItem('parley.model');
  } catch {
    saved = null;
  }
  const options = Array.from(ui.model.options, (option) => option.value);
  if (saved && options.includes(saved)) return saved;
  return options[0] || null;
}

function selectModel(id) {
  if (!id) return;
  if (!Array.from(ui.model.options).some((option) => option.value === id)) {
    const option = document.createElement('option');
    option.value = id;
    option.textContent = `${id} (unavailable)`;
    ui.model.append(option);
  }
  ui.model.value = id;
}

ui.model.addEventListener('change', async () => {
  const model = ui.model.value;
  try {
    localStorage.setItem('parley.model', model);
  } catch {
    // storage may be disabled; the choice still applies to this conversation
  }
  if (!state.conversation) return;
  try {
    state.conversation = await Api.updateConversation(state.conversation.id, { model });
    announce(`Model set to ${model}.`);
  } catch (error) {
    announce(`Could not change the model: ${describe(error)}`);
  }
});

ui.systemToggle.addEventListener('click', () => {
  const open = ui.systemForm.hidden;
  ui.systemForm.hidden = !open;
  ui.systemToggle.setAttribute('aria-expanded', String(open));
  if (open) {
    ui.systemPrompt.value = state.conversation
      ? state.conversation.system_prompt || '' : state.pendingSystemPrompt;
    ui.systemStatus.textContent = '';
    ui.systemPrompt.focus();
  }
});

function closeSystemForm() {
  ui.systemForm.hidden = true;
  ui.systemToggle.setAttribute('aria-expanded', 'false');
}

ui.systemCancel.addEventListener('click', () => {
  closeSystemForm();
  ui.systemToggle.focus();
});

ui.systemForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const prompt = ui.systemPrompt.value.trim();
  if (!state.conversation) {
    state.pendingSystemPrompt = prompt;
    ui.systemStatus.textContent = 'Saved for the new conversation.';
    return;
  }
  try {
    state.conversation = await Api.updateConversation(state.conversation.id, { system_prompt: prompt || null });
    ui.systemStatus.textContent = 'Saved.';
  } catch (error) {
    ui.systemStatus.textContent = `Not saved: ${describe(error)}`;
  }
});

// MARK: - Rename and delete

ui.rename.addEventListener('click', () => {
  if (!state.conversation) return;
  ui.renameInput.value = state.conversation.title || '';
  ui.renameDialog.showModal();
  ui.renameInput.select();
});

ui.renameCancel.addEventListener('click', () => ui.renameDialog.close('cancel'));

ui.renameForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const title = ui.renameInput.value.trim();
  ui.renameDialog.close('save');
  if (!title || !state.conversation) return;
  try {
    state.conversation = await Api.updateConversation(state.conversation.id, { title });
    ui.title.textContent = state.conversation.title;
    conversations.rename(state.conversation.id, state.conversation.title);
    announce('Conversation renamed.');
  } catch (error) {
    announce(`Could not rename: ${describe(error)}`);
  }
});

ui.remove.addEventListener('click', () => {
  if (!state.conversation) return;
  ui.deleteTitle.textContent = state.conversation.title || 'Untitled';
  ui.deleteDialog.returnValue = '';
  ui.deleteDialog.showModal();
});

ui.deleteDialog.addEventListener('close', async () => {
  if (ui.deleteDialog.returnValue !== 'delete' || !state.conversation) return;
  const id = state.conversation.id;
  try {
    await Api.deleteConversation(id);
    conversations.remove(id);
    announce('Conversation deleted.');
    location.hash = '#/';
  } catch (error) {
    announce(`Could not delete: ${describe(error)}`);
  }
});

// MARK: - Sidebar (drawer on a phone)

function setSidebarOpen(open) {
  ui.app.classList.toggle('sidebar-open', open);
  ui.toggleSidebar.setAttribute('aria-expanded', String(open));
  ui.toggleSidebar.setAttribute('aria-label', open ? 'Hide conversations' : 'Show conversations');
  if (open) document.getElementById('search').focus();
}

ui.toggleSidebar.addEventListener('click', () => setSidebarOpen(!ui.app.classList.contains('sidebar-open')));
ui.scrim.addEventListener('click', () => setSidebarOpen(false));
ui.sidebar.addEventListener('click', (event) => {
  if (event.target.closest('a')) setSidebarOpen(false);
});

ui.newConversation.addEventListener('click', () => {
  setSidebarOpen(false);
  if (location.hash !== '#/') location.hash = '#/';
  else showFresh();
  ui.input.focus();
});

// MARK: - Showing a conversation

function routeId() {
  const match = location.hash.match(/^#\/c\/([^/?#]+)/);
  return match ? decodeURIComponent(match[1]) : null;
}

function showFresh() {
  state.loadSequence += 1;
  live.close();
  state.streamingId = null;
  state.conversation = null;
  state.messages.clear();
  ui.list.replaceChildren();
  ui.empty.hidden = false;
  ui.notice.hidden = true;
  ui.title.textContent = 'New conversation';
  ui.rename.hidden = true;
  ui.remove.hidden = true;
  closeSystemForm();
  selectModel(preferredModel());
  conversations.markCurrent(null);
  document.title = 'Parley';
  updateComposer();
}

async function openRoute() {
  const id = routeId();
  if (!id) {
    showFresh();
    return;
  }
  if (state.conversation && state.conversation.id === id) return;
  const sequence = ++state.loadSequence;
  live.close();
  state.streamingId = null;
  try {
    const conversation = await Api.conversation(id);
    if (sequence !== state.loadSequence) return;
    renderConversation(conversation);
    scrollToBottomNow();
  } catch (error) {
    if (sequence !== state.loadSequence || (error instanceof ApiError && error.status === 401)) return;
    showFresh();
    history.replaceState(null, '', '#/');
    ui.notice.textContent = error instanceof ApiError && error.status === 404
      ? 'Conversation not found: it does not exist, or it is not yours.' : `Could not open the conversation: ${describe(error)}`;
    ui.notice.hidden = false;
    announce(ui.notice.textContent);
  }
}

window.addEventListener('hashchange', openRoute);

/** Renders a whole branch in one fragment (one layout), then follows its running answer if any. */
function renderConversation(conversation) {
  performance.mark('parley-render-start');
  const { messages = [], ...rest } = conversation;
  state.conversation = rest;
  state.messages.clear();
  live.close();
  state.streamingId = null;
  const fragment = document.createDocumentFragment();
  let streaming = null;
  for (const message of messages) {
    if (message.role === 'system') continue;
    state.messages.set(message.id, message);
    fragment.append(createMessageElement(message));
    if (message.status === 'streaming') streaming = message;
  }
  ui.list.replaceChildren(fragment);
  ui.empty.hidden = state.messages.size > 0;
  ui.title.textContent = rest.title || 'Untitled';
  document.title = `${rest.title || 'Untitled'} · Parley`;
  ui.rename.hidden = false;
  ui.remove.hidden = false;
  selectModel(rest.model);
  if (!ui.systemForm.hidden) ui.systemPrompt.value = rest.system_prompt || '';
  conversations.markCurrent(rest.id);
  for (const message of messages) {
    if (message.role !== 'system' && message.error && message.status !== 'streaming') {
      showServerError(message);
    }
  }
  performance.mark('parley-render-end');
  performance.measure('parley-render', 'parley-render-start', 'parley-render-end');
  if (streaming) follow(streaming.id);
  updateComposer();
}

function showServerError(message) {
  const el = elementFor(message.id);
  if (!el) return;
  showError(el, errorText(message.error), message.role === 'assistant' ? () => regenerate(message.id) : null);
}

/** Removes `el` and everything after it, then appends `messages` (regenerate, edit). */
function replaceFrom(el, messages) {
  let node = el;
  while (node) {
    const next = node.nextElementSibling;
    if (node.dataset.id) state.messages.delete(node.dataset.id);
    node.remove();
    node = next;
  }
  appendMessages(messages);
}

function appendMessages(messages) {
  const fragment = document.createDocumentFragment();
  for (const message of messages) {
    state.messages.set(message.id, message);
    fragment.append(createMessageElement(message));
  }
  ui.list.append(fragment);
  ui.empty.hidden = ui.list.children.length > 0;
}

function touchConversation(leafId) {
  if (!state.conversation) return;
  state.conversation.current_leaf_id = leafId;
  conversations.upsert(state.conversation);
  conversations.markCurrent(state.conversation.id);
}

// MARK: - Following a running answer

function follow(messageId, resumeFrom = null) {
  state.streamingId = messageId;
  const el = elementFor(messageId);
  if (el) {
    el.classList.add('is-streaming');
    el.setAttribute('aria-busy', 'true');
  }
  live.open(messageId, sinkFor(messageId), resumeFrom);
  announce('The assistant is answering.');
  updateComposer();
}

function sinkFor(messageId) {
  return {
    onEvent(name, data) {
      const el = elementFor(messageId);
      const message = state.messages.get(messageId);
      if (!el || !message) return;
      switch (name) {
        case 'snapshot':
          setBlocks(el, data.blocks || [], data.tail || '');
          setReasoning(el, data.reasoning);
          message.content = data.content;
          if (typeof data.reasoning === 'string') message.reasoning = data.reasoning;
          if (data.status && data.status !== message.status && data.status !== 'streaming') {
            message.status = data.status;
          }
          updateMeta(el, { ...message, status: 'streaming' });
          clearError(el);
          break;
        case 'reasoning':
          // Not announced: the live region says "answering" once, not every token of thought.
          appendReasoning(el, data.text);
          break;
        case 'block':
          putBlock(el, data.index, data.html);
          syncReasoning(el);
          break;
        case 'tail':
          setTail(el, data.text || '');
          syncReasoning(el);
          break;
        case 'tail_append':
          appendTail(el, data.text || '');
          syncReasoning(el);
          break;
        case 'error':
          message.error = { code: data.code, message: data.message };
          showError(el, errorText(message.error), () => regenerate(messageId));
          break;
        case 'done':
          finishAnswer(el, message, data);
          return;
        default:
          return;
      }
      stickToBottom();
    },
    onConnection(connection) {
      const el = elementFor(messageId);
      if (!el) return;
      if (connection === 'reconnecting') {
        setStatusText(el, 'Reconnecting…');
      } else if (connection === 'open') {
        setStatusText(el, 'Streaming…');
        if (!(state.messages.get(messageId) || {}).error) clearError(el);
      } else if (connection === 'lost') {
        setStatusText(el, 'Disconnected');
        showError(el, 'The connection to this answer was lost.', () => {
          clearError(el);
          live.retry();
        });
      }
    },
  };
}

function finishAnswer(el, message, done) {
  applyPatch(el, done.patch);
  setTail(el, '');
  message.status = done.status || 'complete';
  message.finish_reason = done.finish_reason ?? null;
  message.usage = done.usage ?? null;
  if (message.status === 'complete' || message.status === 'stopped') {
    message.error = message.status === 'complete' ? null : message.error;
  }
  updateMeta(el, message);
  if (!message.error) clearError(el);
  if (state.streamingId === message.id) state.streamingId = null;
  updateComposer();
  stickToBottom();
  const words = { complete: 'The answer is complete.', stopped: 'The answer was stopped.',
    failed: 'The answer failed.', interrupted: 'The answer was interrupted.' };
  announce(message.error ? `${words[message.status] || ''} ${errorText(message.error)}` : words[message.status] || '');
  reconcile(message.id, done.blocks);
}

/** Reads the stored message once (its Markdown source for Copy) and fixes the body only if the
 *  HTML shown differs from the stored HTML. */
async function reconcile(messageId, expectedBlocks) {
  let stored;
  try {
    stored = await Api.message(messageId);
  } catch {
    return;
  }
  const message = state.messages.get(messageId);
  const el = elementFor(messageId);
  if (!message || !el || state.streamingId === messageId) return;
  message.content = stored.content;
  message.html = stored.html;
  message.reasoning = stored.reasoning;
  message.status = stored.status;
  message.finish_reason = stored.finish_reason;
  message.model = stored.model || message.model;
  if (stored.error) message.error = stored.error;
  const shown = shownHTML(el);
  const countDiffers = typeof expectedBlocks === 'number' && shown === null
    ? blockCount(el) !== expectedBlocks : false;
  if (typeof stored.html === 'string' && (countDiffers || shown !== stored.html)) setHTML(el, stored.html);
  if (typeof stored.reasoning === 'string' && shownReasoning(el) !== stored.reasoning) {
    setReasoning(el, stored.reasoning);
  }
  updateMeta(el, message);
  if (message.error && message.status !== 'complete') showServerError(message);
}

// MARK: - Composer

function updateComposer() {
  const streaming = state.streamingId !== null;
  const hadFocus = document.activeElement === ui.send || document.activeElement === ui.stop;
  ui.send.hidden = streaming;
  ui.stop.hidden = !streaming;
  if (hadFocus) (streaming ? ui.stop : ui.input).focus();
}

const growsByItself = typeof CSS !== 'undefined' && CSS.supports('field-sizing', 'content');

function fitComposer() {
  if (growsByItself) return;
  const lines = ui.input.value.split('\n').length;
  ui.input.rows = Math.min(Math.max(lines, 1), 10);
}

ui.input.addEventListener('input', fitComposer);

ui.input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing && !event.altKey && !event.ctrlKey && !event.metaKey) {
    event.preventDefault();
    sendFromComposer();
  }
});

ui.composer.addEventListener('submit', (event) => {
  event.preventDefault();
  sendFromComposer();
});

ui.stop.addEventListener('click', stopStreaming);

document.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape' || event.defaultPrevented) return;
  if (document.querySelector('dialog[open]')) return;
  if (state.streamingId) {
    event.preventDefault();
    stopStreaming();
  } else if (ui.app.classList.contains('sidebar-open')) {
    setSidebarOpen(false);
    ui.toggleSidebar.focus();
  }
});

function sendFromComposer() {
  const text = ui.input.value;
  if (!text.trim() || state.streamingId || state.sending) return;
  ui.input.value = '';
  fitComposer();
  send(text, null);
}

/** Sends `text`; on failure it stays on the page as a failed message with Retry. */
async function send(text, failedEl) {
  state.sending = true;
  try {
    if (!state.conversation) {
      await modelsReady;
      const fields = { title: titleFrom(text) };
      if (ui.model.value) fields.model = ui.model.value;
      if (state.pendingSystemPrompt) fields.system_prompt = state.pendingSystemPrompt;
      const created = await Api.createConversation(fields);
      state.loadSequence += 1;
      state.conversation = created;
      state.pendingSystemPrompt = '';
      history.pushState(null, '', `#/c/${encodeURIComponent(created.id)}`);
      ui.title.textContent = created.title || 'Untitled';
      document.title = `${created.title || 'Untitled'} · Parley`;
      ui.rename.hidden = false;
      ui.remove.hidden = false;
    }
    const conversationId = state.conversation.id;
    const result = await Api.postMessage(conversationId, { content: text });
    if (!state.conversation || state.conversation.id !== conversationId) return;
    if (failedEl) failedEl.remove();
    appendMessages([result.user_message, result.assistant_message]);
    touchConversation(result.assistant_message.id);
    scrollToBottomNow();
    follow(result.assistant_message.id);
  } catch (error) {
    showFailedSend(text, error, failedEl);
  } finally {
    state.sending = false;
  }
}

function showFailedSend(text, error, failedEl) {
  let el = failedEl;
  if (!el) {
    state.localSequence += 1;
    const message = { id: `local-${state.localSequence}`, role: 'user', status: 'failed', content: text, local: true };
    appendMessages([message]);
    el = elementFor(message.id);
    setStatusText(el, 'Not sent');
  }
  showError(el, `Not sent: ${describe(error)}`, () => {
    clearError(el);
    send(text, el);
  });
  announce(`The message was not sent. ${describe(error)}`);
  scrollToBottomNow();
}

async function stopStreaming() {
  const id = state.streamingId;
  if (!id) return;
  try {
    const stopped = await Api.stop(id);
    // The stream normally delivers `done`; without a live connection, apply the stored state.
    if (!live.connected || live.messageId !== id) {
      const el = elementFor(id);
      const message = state.messages.get(id);
      if (el && message) {
        live.close();
        Object.assign(message, stopped);
        if (typeof stopped.html === 'string') setHTML(el, stopped.html);
        setReasoning(el, stopped.reasoning);
        state.streamingId = null;
        updateMeta(el, message);
        updateComposer();
      }
    }
  } catch (error) {
    const el = elementFor(id);
    if (el) showError(el, `Could not stop: ${describe(error)}`, () => stopStreaming());
  }
}

// MARK: - Message actions (one delegated handler for the whole list)

ui.list.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  if (!button || button.disabled) return;
  const el = button.closest('.message');
  if (!el) return;
  const id = el.dataset.id;
  switch (button.dataset.action) {
    case 'copy': copyMessage(id, button); break;
    case 'copy-code': copyCode(button); break;
    case 'edit': startEdit(el); break;
    case 'regenerate': regenerate(id); break;
    case 'continue': continueAnswer(id); break;
    case 'prev': switchSibling(id, -1); break;
    case 'next': switchSibling(id, +1); break;
    case 'retry': if (typeof el.retry === 'function') { const retry = el.retry; clearError(el); retry(); } break;
    default: break;
  }
});

function busy(el) {
  if (state.streamingId || state.sending) {
    if (el) announce('Wait for the current answer to finish, or stop it first.');
    return true;
  }
  return false;
}

function flash(button, text) {
  const original = button.textContent;
  button.textContent = text;
  setTimeout(() => { button.textContent = original; }, 1500);
  announce(text);
}

async function copyMessage(id, button) {
  const message = state.messages.get(id);
  if (!message) return;
  let content = message.content;
  if (typeof content !== 'string' || message.status === 'streaming') {
    try {
      content = (await Api.message(id)).content;
    } catch (error) {
      announce(`Could not copy: ${describe(error)}`);
      return;
    }
  }
  flash(button, (await copyText(content)) ? 'Copied' : 'Copy failed');
}

async function copyCode(button) {
  const box = button.closest('.codeblock');
  const code = box && box.querySelector('pre');
  if (!code) return;
  flash(button, (await copyText(code.textContent)) ? 'Copied' : 'Copy failed');
}

async function regenerate(id) {
  const el = elementFor(id);
  if (!el || busy(el)) return;
  const old = state.messages.get(id);
  state.sending = true;
  try {
    const fresh = await Api.regenerate(id, {});
    const ids = old && old.siblings && old.siblings.ids ? old.siblings.ids : [id];
    fresh.siblings = { index: ids.length, count: ids.length + 1, ids: [...ids, fresh.id] };
    replaceFrom(el, [fresh]);
    touchConversation(fresh.id);
    stickToBottom();
    follow(fresh.id);
  } catch (error) {
    showError(el, `Could not regenerate: ${describe(error)}`, () => regenerate(id));
  } finally {
    state.sending = false;
  }
}

async function continueAnswer(id) {
  const el = elementFor(id);
  if (!el || busy(el)) return;
  state.sending = true;
  try {
    const message = await Api.continueMessage(id);
    const known = state.messages.get(id) || {};
    const merged = { ...known, ...message, siblings: known.siblings, error: null };
    state.messages.set(id, merged);
    clearError(el);
    updateMeta(el, merged);
    touchConversation(id);
    stickToBottom();
    follow(id);
  } catch (error) {
    showError(el, `Could not continue: ${describe(error)}`, () => continueAnswer(id));
  } finally {
    state.sending = false;
  }
}

async function switchSibling(id, step) {
  const message = state.messages.get(id);
  if (!message || !message.siblings || !state.conversation) return;
  const target = message.siblings.ids[message.siblings.index + step];
  if (!target) return;
  if (state.streamingId) live.close();
  try {
    const conversation = await Api.switchBranch(state.conversation.id, target);
    renderConversation(conversation);
    const el = elementFor(target);
    if (el) {
      el.scrollIntoView({ block: 'nearest' });
      const control = el.querySelector(`[data-action="${step < 0 ? 'prev' : 'next'}"]`);
      (control && !control.disabled ? control : el.querySelector('[data-action="copy"]')).focus();
    }
    state.pinned = distanceFromBottom() < PIN_THRESHOLD_PX;
    const position = conversation.messages.find((item) => item.id === target);
    if (position && position.siblings) {
      announce(`Version ${position.siblings.index + 1} of ${position.siblings.count}.`);
    }
  } catch (error) {
    const el = elementFor(id);
    if (el) showError(el, `Could not switch version: ${describe(error)}`, () => switchSibling(id, step));
  }
}

function startEdit(el) {
  const id = el.dataset.id;
  const message = state.messages.get(id);
  if (!message || busy(el) || el.querySelector('.edit-form')) return;
  const body = el.querySelector('.message-body');
  const actions = el.querySelector('.message-actions');
  const form = document.createElement('form');
  form.className = 'edit-form';
  const area = document.createElement('textarea');
  area.value = message.content || '';
  area.setAttribute('aria-label', 'Edit message');
  area.rows = 3;
  const row = document.createElement('div');
  row.className = 'form-actions';
  const save = document.createElement('button');
  save.type = 'submit';
  save.className = 'button primary small';
  save.textContent = 'Save and send';
  const cancel = document.createElement('button');
  cancel.type = 'button';
  cancel.className = 'button small';
  cancel.textContent = 'Cancel';
  row.append(save, cancel);
  form.append(area, row);
  body.hidden = true;
  actions.hidden = true;
  body.after(form);
  area.focus();

  const close = () => {
    form.remove();
    body.hidden = false;
    actions.hidden = false;
    el.querySelector('[data-action="edit"]').focus();
  };
  cancel.addEventListener('click', close);
  area.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      close();
    } else if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = area.value;
    if (!text.trim() || busy(el) || !state.conversation) return;
    state.sending = true;
    save.disabled = true;
    try {
      const result = await Api.postMessage(state.conversation.id, { content: text, parent_id: message.parent_id ?? null });
      const ids = message.siblings && message.siblings.ids ? message.siblings.ids : [id];
      result.user_message.siblings = { index: ids.length, count: ids.length + 1, ids: [...ids, result.user_message.id] };
      replaceFrom(el, [result.user_message, result.assistant_message]);
      touchConversation(result.assistant_message.id);
      scrollToBottomNow();
      follow(result.assistant_message.id);
      ui.input.focus();
    } catch (error) {
      save.disabled = false;
      showError(el, `Not sent: ${describe(error)}`, () => form.requestSubmit());
    } finally {
      state.sending = false;
    }
  });
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
  else refreshIfChanged();
});

// Leaving the page (or entering the back/forward cache) drops the connection but keeps the place.
window.addEventListener('pagehide', () => live.suspend());
window.addEventListener('pageshow', (event) => {
  if (event.persisted && live.suspended) live.resume();
});

/** Another tab may have changed the conversation while this one was in the background: re-render
 *  only when the branch or its last message differs from what is shown. */
async function refreshIfChanged() {
  const current = state.conversation;
  if (!current || state.streamingId || state.sending) return;
  // An unsent message (with its Retry) stays until the person deals with it.
  if ([...state.messages.values()].some((message) => message.local)) return;
  try {
    const fresh = await Api.conversation(current.id);
    if (state.conversation !== current || state.streamingId || state.sending) return;
    const branch = (fresh.messages || []).filter((message) => message.role !== 'system');
    const leaf = branch[branch.length - 1];
    const shown = leaf ? state.messages.get(leaf.id) : null;
    const changed = branch.length !== state.messages.size || (leaf && !shown) ||
      (leaf && shown && (leaf.status !== shown.status ||
        (typeof shown.content === 'string' && leaf.content !== shown.content)));
    if (changed) {
      const pinned = state.pinned;
      renderConversation(fresh);
      if (pinned) scrollToBottomNow();
      return;
    }
    const { messages, ...rest } = fresh;
    state.conversation = rest;
    if (rest.title !== current.title) {
      ui.title.textContent = rest.title || 'Untitled';
      conversations.rename(rest.id, rest.title || 'Untitled');
    }
    if (rest.model && rest.model !== ui.model.value) selectModel(rest.model);
  } catch {
    // the next visit tries again
  }
}

// MARK: - Changes made in other tabs and on other devices (live.js)

const applyChange = applyNotifications({
  conversations,
  openId: () => (state.conversation ? state.conversation.id : null),
  hasMessage: (id) => state.messages.has(id),
  refresh: scheduleRefresh,
  updated(summary) {
    const current = state.conversation;
    const branchChanged = summary.current_leaf_id !== current.current_leaf_id;
    Object.assign(current, { title: summary.title, model: summary.model, updated_at: summary.updated_at });
    ui.title.textContent = current.title || 'Untitled';
    document.title = `${current.title || 'Untitled'} · Parley`;
    if (current.model) selectModel(current.model);
    if (branchChanged) scheduleRefresh();
  },
  deleted() {
    showFresh();
    history.replaceState(null, '', '#/');
    ui.notice.textContent = 'This conversation was deleted.';
    ui.notice.hidden = false;
    announce(ui.notice.textContent);
  },
});

let refreshing = false;
let refreshAgain = false;

/** One `refreshIfChanged` at a time; a change told meanwhile reads once more after it. */
async function scheduleRefresh() {
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
      scheduleRefresh();
    }
  }
}

// MARK: - Start

startAccount({ app: ui.app, announce }).then((me) => {
  if (me) live.start();
});
fitComposer();
conversations.loadMore();
openRoute();
ui.input.focus();
