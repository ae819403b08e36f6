// What a refused upload means to the person, and what to do about it (issue 21): one sentence per error
// code of POST /api/files, with the server's own message (which names the limit or what was found);
// and the words a file's chip shows (its size, its extension).

const ACCEPTED = 'Parley takes images (PNG, JPEG, GIF, WebP) and documents (PDF, plain text, Markdown, '
  + 'CSV, JSON, source code).';

function said(error) {
  const text = (error && error.message ? String(error.message) : '').trim();
  if (!text) return '';
  return /[.!?]$/.test(text) ? `${text} ` : `${text}. `;
}

/** The limit, when the server's answer does not name it (the HTTP layer's 413 does not). */
const FILE_LIMIT = 'the server\'s limit for one file (PARLEY_MAX_FILE_BYTES: 20 MiB unless the admin changed it)';

/** `{text, retry}` for a failed upload (an ApiError) of a file of `size` bytes: `retry` when trying
 *  again may work. */
export function uploadAdvice(error, size = null) {
  const code = error && error.code;
  const server = said(error);
  switch (code) {
    case 'payload_too_large': {
      const limit = /\d/.test(server) ? server : `It is over ${FILE_LIMIT}. `;
      const what = size ? `Too big (${sizeText(size)}). ` : 'Too big. ';
      return { text: `${what}${limit}Attach a smaller file, or shrink this one first.`, retry: false };
    }
    case 'quota_exceeded':
      return { text: `Your storage for files is full. ${server}Delete files you no longer need, or ask an admin for more space.`, retry: false };
    case 'unsupported_file':
      return { text: `Not a kind of file Parley takes. ${server}${ACCEPTED}`, retry: false };
    case 'image_too_large':
      return { text: `The image has too many pixels. ${server}Scale it down and attach it again.`, retry: false };
    case 'too_many_pages':
      return { text: `Too many pages. ${server}Split the PDF and attach the parts.`, retry: false };
    case 'invalid_text':
      return { text: `The text could not be read. ${server}Save it as UTF-8 and attach it again.`, retry: false };
    case 'invalid_file':
      return { text: `The file could not be read. ${server}It may be damaged: save or export it again.`, retry: false };
    case 'empty_file':
      return { text: 'The file is empty: there is nothing to attach.', retry: false };
    case 'busy':
      return { text: 'The server is busy with other files. Try again in a moment.', retry: true };
    case 'network':
      // A server refusing a body past its size limit may also just close the connection.
      return { text: 'The upload was cut off. Check the connection and try again; if the file is large, '
        + 'it may be over the size limit: try a smaller one.', retry: true };
    default:
      // A server fault or a lost connection may pass on a second try; a refusal will not.
      return { text: `Not attached. ${server || 'The upload failed. '}`.trim(), retry: !(error && error.status >= 400 && error.status < 500) };
  }
}

/** A file's extension for its badge ("PDF", "MD"), at most four letters; "FILE" without one. */
export function extensionOf(name) {
  const match = /\.([A-Za-z0-9]{1,4})$/.exec(String(name || ''));
  return match ? match[1].toUpperCase() : 'FILE';
}

/** The size of `bytes` as people read it (1.2 MB, 340 KB). */
export function sizeText(bytes) {
  const size = Number(bytes) || 0;
  if (size < 1000) return `${size} B`;
  if (size < 1_000_000) return `${Math.round(size / 1000)} KB`;
  return `${(size / 1_000_000).toFixed(size < 10_000_000 ? 1 : 0)} MB`;
}
