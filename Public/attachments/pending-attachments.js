// The files attached in the composer and not sent yet (issue 21): the model of the chips. Each is one
// chosen file and where its upload stands: `uploading` (with its progress), `done` (the server's record),
// `failed` (the ApiError). Plain objects; no DOM, no network (the controller, attaching.js, uploads).

/** What the server takes as images (the rest are documents, or refused by the server). */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

export class PendingAttachments {
  constructor() {
    this.items = new Map();
    this.sequence = 0;
  }

  /** A new item for `file`, uploading from 0. `isImage` is a guess from the browser's type, for the
   *  preview and the vision warning until the server's record says the kind. */
  add(file) {
    this.sequence += 1;
    const item = {
      key: `a${this.sequence}`, file, name: file.name || 'pasted file', size: file.size,
      isImage: IMAGE_TYPES.has(file.type), state: 'uploading', progress: 0, record: null, created: false, error: null,
    };
    this.items.set(item.key, item);
    return item;
  }

  get(key) {
    return this.items.get(key) || null;
  }

  /** Every item, in the order they were attached. */
  get all() {
    return [...this.items.values()];
  }

  /** Whether any upload is still running (Send waits for it). */
  get uploading() {
    return this.all.some((item) => item.state === 'uploading');
  }

  progress(key, fraction) {
    const item = this.get(key);
    if (item && item.state === 'uploading') item.progress = fraction;
    return item;
  }

  /** The upload answered: `record` is the file's JSON; `created` when this upload made it (201). */
  done(key, record, created) {
    const item = this.get(key);
    if (!item) return null;
    Object.assign(item, { state: 'done', progress: 1, record, created, error: null });
    item.isImage = record.kind === 'image';
    return item;
  }

  failed(key, error) {
    const item = this.get(key);
    if (item) Object.assign(item, { state: 'failed', error });
    return item;
  }

  /** The same file tried again (after `busy` or a cut connection). */
  retry(key) {
    const item = this.get(key);
    if (item) Object.assign(item, { state: 'uploading', progress: 0, error: null });
    return item;
  }

  remove(key) {
    const item = this.get(key);
    this.items.delete(key);
    return item;
  }

  /** Whether another item than `key` holds the uploaded file `id` (the same file attached twice). */
  shares(key, id) {
    return this.all.some((item) => item.key !== key && item.record && item.record.id === id);
  }

  /** The uploaded files to send, each once: `{id, part}` where `part` is the message part the server
   *  will store for it (shown on a message that could not be sent). Failed items are left out. */
  ready() {
    const seen = new Set();
    const files = [];
    for (const item of this.all) {
      if (item.state !== 'done' || seen.has(item.record.id)) continue;
      seen.add(item.record.id);
      const { id, filename, media_type: mediaType, kind } = item.record;
      files.push({ id, part: { type: 'file', file_id: id, filename, media_type: mediaType, kind } });
    }
    return files;
  }

  /** Forgets every item; returns them (their previews are to be let go). */
  clear() {
    const items = this.all;
    this.items.clear();
    return items;
  }
}
