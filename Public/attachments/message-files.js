// The files a sent message holds (issue 21), a view: its `file` parts drawn above its text, an image as
// its thumbnail (GET /api/files/{id}?variant=thumb) on a button that opens it larger (image-viewer.js,
// through the message list's `view-image` action), a document as a chip that downloads it. Filenames
// come from people: they only ever go in as text or attribute values.
import { Api } from '../transport/api.js';
import { el } from '../shared/dom.js';
import { extensionOf } from './upload-advice.js';

/** The `file` parts of `parts` (a message's), or none. */
export function fileParts(parts) {
  return Array.isArray(parts) ? parts.filter((part) => part && part.type === 'file' && part.file_id) : [];
}

function imageItem(part, name) {
  const thumbnail = el('img', { className: 'message-file-thumb', src: Api.thumbnailURL(part.file_id), alt: '',
    loading: 'lazy', decoding: 'async' });
  // No thumbnail (the file gone, the server unreachable): the badge says what it was, and it still opens.
  thumbnail.addEventListener('error', () => thumbnail.replaceWith(el('span', { className: 'file-badge' }, extensionOf(name))),
    { once: true });
  return el('li', { className: 'message-file is-image' },
    el('button', { className: 'message-file-open', type: 'button', 'data-action': 'view-image',
      'data-file-id': part.file_id, 'data-filename': name, 'aria-label': `View ${name}`, title: name }, thumbnail));
}

function documentItem(part, name) {
  return el('li', { className: 'message-file is-document' },
    el('a', { className: 'message-file-chip', href: Api.fileURL(part.file_id), download: name,
      'aria-label': `Download ${name}`, title: `Download ${name}` },
    el('span', { className: 'file-badge', 'aria-hidden': 'true' }, extensionOf(name)),
    el('span', { className: 'message-file-name' }, name)));
}

/** Shows the files of `parts` in message element `msg` (drawn again from scratch; none: nothing). */
export function showMessageFiles(msg, parts) {
  const old = msg.querySelector('.message-files');
  if (old) old.remove();
  const files = fileParts(parts);
  if (!files.length) return;
  const list = el('ul', { className: 'message-files', 'aria-label': files.length === 1 ? 'Attached file' : 'Attached files' });
  for (const part of files) {
    const name = typeof part.filename === 'string' && part.filename ? part.filename : 'file';
    list.append(part.kind === 'image' ? imageItem(part, name) : documentItem(part, name));
  }
  msg.querySelector('.message-body').prepend(list);
}
