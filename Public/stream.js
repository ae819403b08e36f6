// The tab's one EventSource (browsers allow only 6 HTTP/1.1 connections per host, shared by all tabs).
// It follows one assistant message at a time, remembers the last event id, and can be suspended
// (hidden tab) and resumed without a gap: the server replays from that id or starts with a snapshot.
import { Api, Session } from './api.js';

const EVENTS = ['snapshot', 'reasoning', 'block', 'tail', 'tail_append', 'done'];

export class LiveStream {
  constructor() {
    this.source = null;
    this.messageId = null;
    this.lastEventId = null;
    this.sink = null;
    this.suspended = false;
  }

  /** True while following a message (connected, reconnecting or suspended). */
  get active() { return this.messageId !== null; }

  get connected() { return this.source !== null; }

  /**
   * Follows `messageId`; `sink.onEvent(name, data)` gets snapshot, reasoning, block, tail,
   * tail_append, error and done;
   * `sink.onConnection(state)` gets 'open', 'reconnecting' and 'lost'.
   */
  open(messageId, sink, resumeFrom = null) {
    this.close();
    this.messageId = messageId;
    this.sink = sink;
    this.lastEventId = resumeFrom;
    this.connect();
  }

  connect() {
    this.suspended = false;
    const source = new EventSource(Api.streamURL(this.messageId, this.lastEventId));
    this.source = source;
    const deliver = (name, event) => {
      if (this.source !== source) return;
      if (event.lastEventId) this.lastEventId = event.lastEventId;
      let data;
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      const sink = this.sink;
      if (name === 'done') this.close();
      sink.onEvent(name, data);
    };
    for (const name of EVENTS) source.addEventListener(name, (event) => deliver(name, event));
    source.addEventListener('error', (event) => {
      if (this.source !== source) return;
      // The server's own `event: error` arrives as a MessageEvent with data; a connection
      // failure is a plain Event.
      if (event instanceof MessageEvent && event.data) {
        deliver('error', event);
        return;
      }
      Session.verify();
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        this.source = null;
        this.sink.onConnection('lost');
      } else {
        this.sink.onConnection('reconnecting');
      }
    });
    source.addEventListener('open', () => {
      if (this.source === source) this.sink.onConnection('open');
    });
  }

  /** Reconnects after a lost connection, from the last event seen. */
  retry() {
    if (this.messageId === null) return;
    if (this.source) this.source.close();
    this.source = null;
    this.connect();
  }

  /** Closes the connection but keeps the place (tab hidden for long). */
  suspend() {
    if (!this.source) return;
    this.source.close();
    this.source = null;
    this.suspended = true;
  }

  resume() {
    if (this.suspended && this.messageId !== null) this.connect();
  }

  close() {
    if (this.source) this.source.close();
    this.source = null;
    this.messageId = null;
    this.sink = null;
    this.suspended = false;
  }
}
