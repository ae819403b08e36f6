// The tab's one connection to the server (browsers allow only 6 HTTP/1.1 connections per host, shared
// by all tabs): `GET /api/events` carries the user's notifications, so a change made in another tab or
// on another device shows here at once, and, with `?follow=`, the events of the reply this tab shows
// streaming. Following another reply reopens the connection from the notification part of the last
// event id (`S` of `S.R`), so no notification is missed or repeated; EventSource's own reconnects (and
// `suspend`/`resume` of a hidden tab) resume both parts with the whole id. Transport only: what a
// notification or a reply's event means is the controller's (changes.js, reply.js).
import { Api, Session } from './api.js';

/** The events of a followed reply (the same as GET /api/messages/{id}/stream sends). */
const REPLY_EVENTS = ['snapshot', 'reasoning', 'block', 'tail', 'tail_append', 'tail_html', 'tool_call',
  'tool_call_delta', 'tool_result', 'surface', 'done'];

const NOTIFICATIONS = ['conversation_created', 'conversation_updated', 'conversation_deleted', 'turn',
  'reply_started', 'reply_finished', 'preferences_changed', 'resync'];
/** After the server refused a connection (EventSource gives up), try again after this, doubling. */
const RETRY_MS = 2_000;
const RETRY_MAX_MS = 60_000;

export class UserStream {
  /** `onNotification(name, data)` gets every notification, and `resync` when this tab was away too long. */
  constructor(onNotification) {
    this.onNotification = onNotification;
    this.source = null;
    this.lastEventId = null; // the stream's position: `S`, `S.R` or `S.done`
    this.messageId = null; // the reply followed
    this.sink = null;
    this.connectedFollow = null; // what the open connection follows
    this.suspended = false;
    this.started = false;
    this.retryTimer = null;
    this.retryDelay = RETRY_MS;
  }

  /** True while following a reply (connected, reconnecting or suspended). */
  get active() { return this.messageId !== null; }

  /** True while the open connection follows the reply followed. */
  get connected() { return this.source !== null && this.connectedFollow === this.messageId; }

  /** Opens the connection for notifications (once the caller is known to be signed in). */
  start() {
    if (this.started) return;
    this.started = true;
    this.connect(false);
  }

  /**
   * Follows `messageId` on the same connection; `sink.onEvent(name, data)` gets snapshot, reasoning,
   * block, tail, tail_append, tail_html, tool_call, tool_call_delta, tool_result, surface, error and done, `sink.onConnection(state)` gets 'open', 'reconnecting' and 'lost'.
   */
  open(messageId, sink) {
    this.messageId = messageId;
    this.sink = sink;
    this.started = true;
    this.connect(true);
  }

  /** Stops following (the connection stays, for notifications). */
  close() {
    const replyLive = this.connectedFollow !== null && !this.replyDone();
    this.messageId = null;
    this.sink = null;
    // A connection still carrying another reply's events is reopened without it, unless the page
    // follows another reply in the same task (showing a conversation closes, then follows its answer).
    if (replyLive && this.source) {
      queueMicrotask(() => {
        if (this.messageId === null && this.source && this.connectedFollow !== null) this.connect(true);
      });
    }
  }

  /** Reconnects after a lost connection, from the last event seen. */
  retry() {
    if (this.started) this.connect(false);
  }

  /** Closes the connection but keeps the place (tab hidden for long, page in the back/forward cache). */
  suspend() {
    clearTimeout(this.retryTimer);
    if (!this.source) return;
    delete document.documentElement.dataset.live;
    this.source.close();
    this.source = null;
    this.suspended = true;
  }

  resume() {
    if (this.suspended) this.connect(false);
  }

  replyDone() {
    return typeof this.lastEventId === 'string' && this.lastEventId.endsWith('.done');
  }

  /** Opens the connection; `newFollow`: what is followed changed, so only the notification part of
   *  the last id applies. */
  connect(newFollow) {
    clearTimeout(this.retryTimer);
    if (this.source) this.source.close();
    this.suspended = false;
    const params = new URLSearchParams();
    if (this.messageId) params.set('follow', this.messageId);
    let last = this.lastEventId;
    if (last && newFollow) last = last.split('.')[0];
    if (last) params.set('last_event_id', last);
    const query = params.toString();
    const source = new EventSource(`/api/events${query ? `?${query}` : ''}`);
    this.source = source;
    this.connectedFollow = this.messageId;
    const followed = this.messageId;
    const read = (event) => {
      if (this.source !== source) return null;
      if (event.lastEventId) this.lastEventId = event.lastEventId;
      try {
        return JSON.parse(event.data);
      } catch {
        return null;
      }
    };
    const toReply = (name, event) => {
      const data = read(event);
      if (data === null || followed === null || followed !== this.messageId) return;
      const sink = this.sink;
      if (name === 'done') {
        this.messageId = null;
        this.sink = null;
      }
      if (sink) sink.onEvent(name, data);
    };
    for (const name of REPLY_EVENTS) source.addEventListener(name, (event) => toReply(name, event));
    for (const name of NOTIFICATIONS) {
      source.addEventListener(name, (event) => {
        const data = read(event);
        if (data !== null) this.onNotification(name, data);
      });
    }
    source.addEventListener('ready', (event) => {
      if (read(event) === null) return;
      this.retryDelay = RETRY_MS;
      // Every notification from here on reaches this tab (what the browser tests wait for).
      document.documentElement.dataset.live = 'ready';
    });
    source.addEventListener('open', () => {
      if (this.source === source && this.sink && followed === this.messageId) this.sink.onConnection('open');
    });
    source.addEventListener('error', (event) => {
      if (this.source !== source) return;
      // The server's own `event: error` (about the reply) is a MessageEvent with data; a connection
      // failure is a plain Event.
      if (event instanceof MessageEvent && event.data) {
        toReply('error', event);
        return;
      }
      Session.verify();
      delete document.documentElement.dataset.live;
      const sink = followed === this.messageId ? this.sink : null;
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        this.source = null;
        if (sink) sink.onConnection('lost');
        this.scheduleRetry();
      } else if (sink) {
        sink.onConnection('reconnecting');
      }
    });
  }

  /** EventSource gave up (an error status): try again later, unless the session has ended (the
   *  sign-in form is showing, and signing in reloads the page). */
  scheduleRetry() {
    clearTimeout(this.retryTimer);
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MAX_MS);
    this.retryTimer = setTimeout(async () => {
      if (this.source || this.suspended) return;
      if (Session.team) {
        try {
          await Api.me();
        } catch {
          if (!this.source) this.scheduleRetry();
          return;
        }
      }
      if (!this.source && !this.suspended) this.connect(false);
    }, delay);
  }
}
