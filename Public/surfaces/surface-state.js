// One surface's state (A2UI v0.9): its catalog, its components by id (the flat adjacency list the
// messages send), its data model and whether it was deleted, as the fold of its messages in order.
// Input components write the data model too (two-way binding, local until an action sends it). It
// knows which reply created the surface and which later replies changed it. No DOM.
import { copyJSON, getAt, setAt } from './pointer.js';

/** The catalog ids in circulation for v0.9's basic catalog; a surface of another catalog is not drawn. */
const BASIC_CATALOG = /\/v0_9\/(basic_catalog\.json|catalogs\/basic\/catalog\.json)$/;

export class SurfaceState {
  constructor(surfaceId) {
    this.surfaceId = surfaceId;
    this.catalogId = '';
    this.components = new Map();
    this.data = {};
    /** The pointers the person wrote (typed, picked): only those are tested against a pattern. */
    this.typed = new Set();
    this.created = false;
    this.deleted = false;
    this.createdBy = null; // the id of the reply that created it
    this.changedBy = []; // ids of later replies that changed it, in order
    this.deletedBy = null;
  }

  /** Whether the catalog is the basic one (the only one the page draws). */
  get knownCatalog() {
    return BASIC_CATALOG.test(this.catalogId);
  }

  /** Whether the tree can be drawn: created, not deleted, its `root` arrived. */
  get ready() {
    return this.created && !this.deleted && this.components.has('root');
  }

  /** Applies one A2UI message that reply `replyId` carried; returns what it changed: 'components',
   *  'data', 'deleted', 'created' or '' (nothing: not for this surface, or not understood). */
  apply(message, replyId) {
    if (!message || typeof message !== 'object') return '';
    if (message.createSurface && message.createSurface.surfaceId === this.surfaceId) {
      this.catalogId = String(message.createSurface.catalogId || '');
      this.components = new Map();
      this.data = {};
      this.created = true;
      this.deleted = false;
      this.createdBy = replyId;
      this.changedBy = [];
      this.deletedBy = null;
      return 'created';
    }
    const change = this.applyChange(message);
    if (change && replyId !== this.createdBy && !this.changedBy.includes(replyId)) this.changedBy.push(replyId);
    if (change === 'deleted') this.deletedBy = replyId;
    return change;
  }

  applyChange(message) {
    const update = message.updateComponents;
    if (update && update.surfaceId === this.surfaceId && Array.isArray(update.components)) {
      for (const component of update.components) {
        if (component && typeof component.id === 'string' && typeof component.component === 'string') {
          this.components.set(component.id, component);
        }
      }
      return 'components';
    }
    const data = message.updateDataModel;
    if (data && data.surfaceId === this.surfaceId) {
      this.data = setAt(this.data, typeof data.path === 'string' ? data.path : '/', copyJSON(data.value));
      return 'data';
    }
    if (message.deleteSurface && message.deleteSurface.surfaceId === this.surfaceId) {
      this.deleted = true;
      this.components = new Map();
      this.data = {};
      return 'deleted';
    }
    return '';
  }

  /** The value at absolute pointer `pointer`. */
  read(pointer) {
    return getAt(this.data, pointer);
  }

  /** A person's input: the value at `pointer` set in the local data model. */
  write(pointer, value) {
    this.typed.add(pointer);
    this.data = setAt(this.data, pointer, value);
  }
}

/** The surface id an A2UI message is about, or null. */
export function surfaceIdOf(message) {
  if (!message || typeof message !== 'object') return null;
  for (const key of ['createSurface', 'updateComponents', 'updateDataModel', 'deleteSurface']) {
    const body = message[key];
    if (body && typeof body.surfaceId === 'string') return body.surfaceId;
  }
  return null;
}
