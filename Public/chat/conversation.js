// The open conversation as this tab knows it: the conversation's fields, the messages of the branch
// shown, and what the tab is doing with it (following a reply, sending, which load is current). It
// applies the server's answers and the followed reply's events to plain objects and touches no DOM
// and no network. It owns its writes: the rest of the page reads its fields and changes them only
// through its methods, so the views and the controller read one truth.

import { applyToolEvent } from '../tools/tool-parts.js';

const TITLE_LENGTH = 60;

/** A new conversation's title until the server names it: the question's first line, capped. */
export function titleFrom(text) {
  const line = text.trim().split('\n')[0].trim();
  return line.length > TITLE_LENGTH ? `${line.slice(0, TITLE_LENGTH - 1)}…` : line || 'New conversation';
}

/** The versions of `message` (or of `id` alone) with `newId` added last, as the server would list them
 *  after a regenerate or an edit. */
export function withNewVersion(message, id, newId) {
  const ids = message && message.siblings && message.siblings.ids ? message.siblings.ids : [id];
  return { index: ids.length, count: ids.length + 1, ids: [...ids, newId] };
}

export class ConversationModel {
  constructor() {
    this.conversation = null; // the open conversation, without its messages
    this.messages = new Map(); // id -> message shown in the view
    this.streamingId = null; // the assistant message this tab is following
    this.sending = false;
    this.pendingSettings = {}; // system prompt and generation settings for the conversation the first send creates
    this.loadSequence = 0; // a load answered after a newer one started is dropped
    this.localSequence = 0;
  }

  /** The open conversation's id, or null on a fresh page. */
  get openId() {
    return this.conversation ? this.conversation.id : null;
  }

  /** Nothing open: the fresh page (a load still answering is dropped). */
  clear() {
    this.loadSequence += 1;
    this.streamingId = null;
    this.conversation = null;
    this.messages.clear();
  }

  /** Another conversation starts loading: answers of earlier loads are dropped, nothing is followed.
   *  Returns the load's sequence, for `isCurrentLoad`. */
  startLoad() {
    this.loadSequence += 1;
    this.streamingId = null;
    return this.loadSequence;
  }

  /** Whether no load started after the one numbered `sequence`. */
  isCurrentLoad(sequence) {
    return sequence === this.loadSequence;
  }

  /** Takes a conversation as the server gives it, with its branch; returns the messages to show
   *  (system messages are not shown) and the one still streaming, if any. */
  load(conversation) {
    const { messages = [], ...rest } = conversation;
    this.conversation = rest;
    this.pendingSettings = {}; // settings saved on a fresh page that was then left are not kept for later
    this.messages.clear();
    this.streamingId = null;
    const shown = [];
    let streaming = null;
    for (const message of messages) {
      if (message.role === 'system') continue;
      this.messages.set(message.id, message);
      shown.push(message);
      if (message.status === 'streaming') streaming = message;
    }
    return { shown, streaming };
  }

  /** The settings saved before the first send, for creating its conversation (unset ones left out). */
  pendingFields() {
    return Object.fromEntries(Object.entries(this.pendingSettings).filter(([, value]) => value != null));
  }

  /** Saves settings for the conversation the first send creates (a fresh page). */
  setPendingSettings(fields) {
    this.pendingSettings = fields;
  }

  /** A fresh page takes the person's default system prompt, unless settings were chosen for it. */
  offerDefaultPrompt(prompt) {
    if (Object.keys(this.pendingSettings).length === 0 && prompt) this.pendingSettings = { system_prompt: prompt };
  }

  /** The conversation the first message just created. */
  created(conversation) {
    this.loadSequence += 1;
    this.conversation = conversation;
    this.pendingSettings = {};
  }

  /** Takes the server's fields of the open conversation, keeping the branch shown. */
  refreshFields(fresh) {
    const { messages, ...rest } = fresh;
    this.conversation = rest;
    return rest;
  }

  /** The server's answer to a change of conversation `changed.id` (model, title, settings): taken when
   *  it is the open one; false when another is open now. */
  updated(changed) {
    if (this.openId === null || this.openId !== changed.id) return false;
    this.refreshFields(changed);
    return true;
  }

  /** Pinned and archived of conversation `changed.id`, when it is the open one. */
  applyFlags(changed) {
    if (this.openId === null || this.openId !== changed.id) return false;
    Object.assign(this.conversation, { pinned: changed.pinned, archived: changed.archived });
    return true;
  }

  /** Takes the settings and usage totals of a fresh read of the open conversation (another tab may
   *  have changed them; the summary of `conversation_updated` does not carry them). */
  applySettings(fresh) {
    if (!this.conversation || fresh.id !== this.conversation.id) return false;
    for (const key of ['system_prompt', 'temperature', 'top_p', 'max_tokens', 'tools', 'usage']) {
      if (key in fresh) this.conversation[key] = fresh[key];
    }
    return true;
  }

  /** Applies another tab's change of the open conversation (its summary: title, model, pinned,
   *  archived); true when its branch changed. */
  applySummary(summary) {
    const current = this.conversation;
    const branchChanged = summary.current_leaf_id !== current.current_leaf_id;
    Object.assign(current, { title: summary.title, model: summary.model, updated_at: summary.updated_at,
      pinned: summary.pinned, archived: summary.archived });
    return branchChanged;
  }

  /** A send, regenerate, continue or edit is under way (one at a time). */
  startSending() {
    this.sending = true;
  }

  endSending() {
    this.sending = false;
  }

  /** This tab follows the reply `messageId` (its events come to `applySnapshot` … `applyDone`). */
  follow(messageId) {
    this.streamingId = messageId;
  }

  /** `fresh` (a regenerated answer or an edited question) is the newest version of `previous` (the
   *  message `id` it replaces, as known before the request). */
  markNewVersion(fresh, previous, id) {
    fresh.siblings = withNewVersion(previous, id, fresh.id);
    return fresh;
  }

  add(messages) {
    for (const message of messages) this.messages.set(message.id, message);
  }

  forget(id) {
    this.messages.delete(id);
  }

  /** Records the open conversation's new current leaf; false when none is open. */
  moveLeaf(leafId) {
    if (!this.conversation) return false;
    this.conversation.current_leaf_id = leafId;
    return true;
  }

  /** A message the server never got, kept on the page with its Retry. */
  unsent(text, parts = []) {
    this.localSequence += 1;
    return { id: `local-${this.localSequence}`, role: 'user', status: 'failed', content: text, local: true, parts };
  }

  hasUnsent() {
    return [...this.messages.values()].some((message) => message.local);
  }

  /** A continued answer: the server's fields over the known ones, its versions kept, its error gone. */
  continued(id, message) {
    const known = this.messages.get(id) || {};
    const merged = { ...known, ...message, siblings: known.siblings, error: null };
    this.messages.set(id, merged);
    return merged;
  }

  /** The answer to a decision on a tool call: the stored message, taken as a continued one (when it is
   *  `streaming` again, the reply resumed and is followed as after a continue). */
  decided(id, message) {
    return this.continued(id, message);
  }

  // MARK: - The followed reply's events

  applySnapshot(message, data) {
    message.content = data.content;
    if (typeof data.reasoning === 'string') message.reasoning = data.reasoning;
    if (Array.isArray(data.parts)) message.parts = data.parts;
    if (data.status && data.status !== message.status && data.status !== 'streaming') {
      message.status = data.status;
    }
  }

  /** `tool_call`, `tool_call_delta` or `tool_result`: returns the call's part (tools/tool-parts.js). */
  applyToolEvent(message, name, data) {
    return applyToolEvent(message, name, data);
  }

  applyError(message, data) {
    message.error = { code: data.code, message: data.message };
  }

  /** The reply ended: its status, finish reason and usage; this tab follows it no longer. */
  applyDone(message, done) {
    message.status = done.status || 'complete';
    message.finish_reason = done.finish_reason ?? null;
    message.usage = done.usage ?? null;
    if (message.status === 'complete' || message.status === 'stopped') {
      message.error = message.status === 'complete' ? null : message.error;
    }
    if (this.streamingId === message.id) this.streamingId = null;
  }

  /** A stop answered without the stream: the stored message replaces the shown one. */
  applyStopped(message, stopped) {
    Object.assign(message, stopped);
    this.streamingId = null;
  }

  /** The stored message read after `done` (its Markdown source for Copy). */
  applyStored(message, stored) {
    message.content = stored.content;
    message.html = stored.html;
    message.reasoning = stored.reasoning;
    if (Array.isArray(stored.parts)) message.parts = stored.parts;
    message.status = stored.status;
    message.finish_reason = stored.finish_reason;
    message.model = stored.model || message.model;
    if (stored.usage !== undefined) message.usage = stored.usage;
    if (stored.error) message.error = stored.error;
  }

  /** Whether the server's copy of the open conversation differs from the branch shown: its length,
   *  its last message, or that message's status or text. */
  differsFrom(fresh) {
    const branch = (fresh.messages || []).filter((message) => message.role !== 'system');
    const leaf = branch[branch.length - 1];
    const shown = leaf ? this.messages.get(leaf.id) : null;
    return Boolean(branch.length !== this.messages.size || (leaf && !shown) ||
      (leaf && shown && (leaf.status !== shown.status ||
        (typeof shown.content === 'string' && leaf.content !== shown.content))));
  }
}
