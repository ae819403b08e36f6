// Attaching files to the next message (issue 21), a part of the controller (app.js): each file chosen,
// pasted or dropped becomes a chip at once and uploads (transport/uploads.js) with its progress; Remove
// cancels an upload in flight; a refusal stays at its chip with what to do. Send waits while anything
// uploads, then takes the uploaded files (sending.js) and the chips go. An image's preview is a blob URL
// of the file itself, let go when its chip goes.
import { Api } from '../transport/api.js';
import { uploadFile } from '../transport/uploads.js';
import { PendingAttachments } from './pending-attachments.js';
import { uploadAdvice } from './upload-advice.js';

/** `page` gives the views `attachmentTray`, `composer` and `topbar` (which model is shown, and whether
 *  it sees images), and `announce(text)`. */
export function attaching(page) {
  const { attachmentTray: tray, composer, topbar, announce } = page;
  const pending = new PendingAttachments();
  const previews = new Map();
  const uploads = new Map();

  function warningFor(item) {
    if (!item.isImage || item.state === 'failed' || topbar.seesImages() !== false) return '';
    return `${topbar.labelOf(topbar.model)} cannot see images: choose a model that can, or remove this image.`;
  }

  function show(item) {
    tray.show(item, {
      preview: previews.get(item.key) || null,
      warning: warningFor(item),
      error: item.state === 'failed' ? uploadAdvice(item.error, item.size) : null,
    });
  }

  function syncSend() {
    composer.setWaitingForUploads(pending.uploading);
  }

  /** Files chosen, pasted or dropped: a chip each, uploading at once. */
  function add(files) {
    for (const file of files) {
      const item = pending.add(file);
      if (item.isImage) previews.set(item.key, URL.createObjectURL(file));
      show(item);
      start(item);
    }
    announce(files.length === 1 ? `Uploading ${files[0].name || 'the file'}.` : `Uploading ${files.length} files.`);
    syncSend();
  }

  function start(item) {
    const { key } = item;
    const upload = uploadFile(item.file, (fraction) => {
      const now = pending.progress(key, fraction);
      if (now) show(now);
    });
    uploads.set(key, upload);
    upload.done.then(({ record, created }) => {
      const done = pending.done(key, record, created);
      if (!done) {
        // Removed as it finished: the file it made goes too.
        if (created && !pending.shares(key, record.id)) Api.deleteFile(record.id).catch(() => {});
        return;
      }
      show(done);
      const warning = warningFor(done);
      announce(`${done.name} is attached.${warning ? ` ${warning}` : ''}`);
    }, (error) => {
      if (error.code === 'aborted') return;
      const failed = pending.failed(key, error);
      if (!failed) return;
      show(failed);
      announce(`${failed.name} was not attached. ${uploadAdvice(error, failed.size).text}`);
    }).finally(() => {
      if (uploads.get(key) === upload) uploads.delete(key);
      syncSend();
    });
  }

  /** Remove: an upload in flight is cancelled; a file this chip's upload made is deleted again. */
  function remove(key) {
    const upload = uploads.get(key);
    uploads.delete(key);
    if (upload) upload.abort();
    const item = pending.remove(key);
    letGo(key);
    tray.remove(key, { moveFocus: true, fallback: composer.input });
    if (!item) return;
    if (item.state === 'done' && item.created && !pending.shares(key, item.record.id)) {
      Api.deleteFile(item.record.id).catch(() => {});
    }
    announce(`${item.name} removed.`);
    syncSend();
  }

  function retry(key) {
    const item = pending.retry(key);
    if (!item) return;
    show(item);
    start(item);
    announce(`Uploading ${item.name} again.`);
    syncSend();
  }

  function letGo(key) {
    const url = previews.get(key);
    if (url) URL.revokeObjectURL(url);
    previews.delete(key);
  }

  /** The model shown changed: the vision warnings follow it. */
  function modelShown() {
    for (const item of pending.all) show(item);
  }

  /**
   * For a send: null while an upload runs (nothing is taken); else the uploaded files (`[{id, part}]`,
   * failed ones left out), and the chips are cleared.
   */
  function take() {
    if (pending.uploading) return null;
    const files = pending.ready();
    for (const item of pending.clear()) letGo(item.key);
    tray.clear();
    syncSend();
    return files;
  }

  return {
    add, remove, retry, take, modelShown,
    get uploading() { return pending.uploading; },
    get hasReady() { return pending.ready().length > 0; },
  };
}
