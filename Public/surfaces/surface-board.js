// Every surface of the branch shown, a part of the controller (app.js): a surface's state is the fold
// of its messages over the branch, in order (each reply's `surface` parts, and the followed reply's
// live `surface` events). Each surface is drawn in the reply that created it (its `.surface-host`,
// made by message/reply-body.js), in its latest state; that host says when a later reply changed it,
// and the later reply's own host says what it changed, with a way to go to it. When only messages were
// added, they are applied to the state kept (what the person typed stays); a branch switch (a
// different list) folds again from the start. A Button's action and `openUrl` go to `actions`
// (surface-actions.js).
import { SurfaceState } from './surface-state.js';
import { SurfaceView } from './renderer.js';
import { make } from './components-display.js';
import { putSurfaceHost } from '../message/reply-body.js';

function isPrefix(shorter, longer) {
  return shorter.length <= longer.length && shorter.every((key, index) => key === longer[index]);
}

/** Whether a change of the message list may move, add or remove a surface's host. */
function touchesHosts(records) {
  const relevant = (node) => node.nodeType === 1 &&
    (node.matches('.message, .surface-host') || node.querySelector('.surface-host') !== null);
  return records.some((record) => [...record.addedNodes, ...record.removedNodes].some(relevant));
}

export class SurfaceBoard {
  /** `list`: the message list element; `model`: the ConversationModel; `actions`: {send(replyId,
   *  action) → Promise of an error or null, openUrl(url)}. */
  constructor({ list, model, actions }) {
    this.list = list;
    this.model = model;
    this.actions = actions;
    this.surfaces = new Map(); // surfaceId -> {state, view, keys, status}
    this.scheduled = false;
    new MutationObserver((records) => {
      if (touchesHosts(records)) this.schedule();
    }).observe(list, { childList: true, subtree: true });
  }

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.refresh();
    });
  }

  /** The followed reply's `surface` event: the message joins the reply's part for that surface (made
   *  at its first message, after the parts so far) and is drawn. */
  apply(el, message, data) {
    if (!data || typeof data.surface_id !== 'string' || !data.message || typeof data.message !== 'object') return;
    if (!Array.isArray(message.parts)) message.parts = [];
    let part = message.parts.filter((item) => item.type === 'surface' && item.surface_id === data.surface_id).pop();
    if (!part) {
      part = { type: 'surface', surface_id: data.surface_id, messages: [] };
      message.parts.push(part);
    }
    if (!Array.isArray(part.messages)) part.messages = [];
    part.messages.push(data.message);
    putSurfaceHost(el, data.surface_id);
    this.refresh();
  }

  /** Each surface's messages over the branch shown, with its hosts, in order. */
  collect() {
    const groups = new Map();
    for (const el of this.list.querySelectorAll(':scope > .message')) {
      const message = this.model.messages.get(el.dataset.id);
      if (!message || !Array.isArray(message.parts)) continue;
      const counts = new Map();
      for (const part of message.parts) {
        if (!part || part.type !== 'surface' || typeof part.surface_id !== 'string') continue;
        const id = part.surface_id;
        if (!groups.has(id)) groups.set(id, { keys: [], items: [], hosts: [] });
        const group = groups.get(id);
        const host = el.querySelector(`.surface-host[data-surface-id="${CSS.escape(id)}"]`);
        if (!group.hosts.some((entry) => entry.replyId === message.id)) group.hosts.push({ host, replyId: message.id });
        for (const item of Array.isArray(part.messages) ? part.messages : []) {
          const count = counts.get(id) || 0;
          counts.set(id, count + 1);
          group.keys.push(`${message.id}/${count}`);
          group.items.push({ message: item, replyId: message.id });
        }
      }
    }
    return groups;
  }

  /** Folds and draws every surface of the branch shown. */
  refresh() {
    const groups = this.collect();
    for (const id of [...this.surfaces.keys()]) if (!groups.has(id)) this.forget(id);
    for (const [id, group] of groups) {
      let entry = this.surfaces.get(id);
      let from = 0;
      if (entry && isPrefix(entry.keys, group.keys)) {
        from = entry.keys.length;
      } else {
        this.forget(id); // another branch: its state is folded again from the start
        const state = new SurfaceState(id);
        entry = { state, keys: [], status: make('p', 'surface-status') };
        entry.status.setAttribute('role', 'status');
        entry.view = new SurfaceView(state, {
          onAction: (action) => this.send(entry, action),
          onOpenUrl: (url) => this.actions.openUrl(url),
        });
        this.surfaces.set(id, entry);
      }
      let changed = from === 0;
      for (const item of group.items.slice(from)) if (entry.state.apply(item.message, item.replyId)) changed = true;
      entry.keys = group.keys;
      // A reply that ended before its surface had a root (stopped, failed) says so instead of drawing.
      const maker = this.model.messages.get(entry.state.createdBy || group.hosts[0].replyId);
      const finished = Boolean(maker && maker.status !== 'streaming');
      if (entry.view.finished !== finished) {
        entry.view.finished = finished;
        if (!entry.state.ready) changed = true;
      }
      if (changed) entry.view.render();
      this.place(entry, group.hosts);
    }
  }

  /** Drops surface `id`'s state and takes its drawing off the page. */
  forget(id) {
    const entry = this.surfaces.get(id);
    if (!entry) return;
    entry.view.element.remove();
    entry.status.remove();
    this.surfaces.delete(id);
  }

  /** The surface in the host of the reply that created it; notes in the others. */
  place(entry, hosts) {
    const { state, view } = entry;
    const home = hosts.find((item) => item.replyId === state.createdBy) || hosts[0];
    for (const { host, replyId } of hosts) {
      if (!host) continue;
      const isHome = host === home.host;
      host.classList.toggle('is-home', isHome);
      const words = isHome ? homeNote(state) : laterNote(state, replyId);
      let note = host.querySelector(':scope > .surface-note');
      if (words) {
        if (!note) {
          note = make('p', 'surface-note');
          host.prepend(note);
        }
        const showable = !isHome && !state.deleted;
        const key = `${words}${showable ? ' +show' : ''}`;
        if (note.dataset.key !== key) {
          note.dataset.key = key;
          note.replaceChildren(make('span', '', words), ...(showable ? [' ', this.showButton(state.surfaceId)] : []));
        }
      } else if (note) {
        note.remove();
      }
      if (isHome && !state.deleted) {
        if (view.element.parentNode !== host) host.append(view.element);
        if (entry.status.parentNode !== host) host.append(entry.status);
      }
    }
    if (state.deleted) {
      view.element.remove();
      entry.status.remove();
    }
  }

  /** A button that takes the person to surface `surfaceId`, where it is drawn now. */
  showButton(surfaceId) {
    const button = make('button', 'button small surface-show', 'Show it');
    button.type = 'button';
    button.addEventListener('click', () => {
      const entry = this.surfaces.get(surfaceId);
      const surface = entry && entry.view.element;
      if (!surface || !surface.isConnected) return;
      surface.scrollIntoView({ block: 'center' });
      surface.tabIndex = -1;
      surface.focus({ preventScroll: true });
    });
    return button;
  }

  /** A Button's action: sent, its outcome said under the surface. */
  async send(entry, action) {
    entry.status.textContent = 'Sending…';
    const error = await this.actions.send(entry.state.createdBy, action);
    entry.status.textContent = error ? `Not sent: ${error}` : '';
  }
}

function homeNote(state) {
  if (state.deleted) return state.deletedBy === state.createdBy ? 'This interactive answer was removed.' : 'This interactive answer was removed by a later reply.';
  return state.changedBy.length ? 'Updated by a later reply.' : '';
}

function laterNote(state, replyId) {
  if (replyId === state.createdBy) return '';
  if (state.deleted && state.deletedBy === replyId) return 'Removed an interactive answer above.';
  return 'Updated an interactive answer above.';
}
