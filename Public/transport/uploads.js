// One file's upload to POST /api/files (issue 21): multipart/form-data with one `file` field, through
// XMLHttpRequest because fetch cannot report an upload's progress. Transport only: what a failure means
// to the person is attachments/upload-advice.js's.
import { ApiError, Session } from './api.js';

/**
 * Starts uploading `file`; `onProgress(fraction)` is told 0 … 1 as the body goes out. Returns
 * `{ done, abort }`: `done` resolves to `{ record, created }` (the file's JSON, and whether this upload
 * made it: 201, not 200 for bytes already uploaded) or rejects with an ApiError (status 0 for a network
 * failure; code `aborted` after `abort()`).
 */
export function uploadFile(file, onProgress = () => {}) {
  const xhr = new XMLHttpRequest();
  const done = new Promise((resolve, reject) => {
    xhr.open('POST', '/api/files');
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.responseType = 'text';
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(Math.min(event.loaded / event.total, 1));
    });
    xhr.addEventListener('load', () => {
      const data = parsed(xhr.responseText);
      if (xhr.status === 200 || xhr.status === 201) {
        if (data && typeof data.id === 'string') resolve({ record: data, created: xhr.status === 201 });
        else reject(new ApiError(xhr.status, 'invalid_response', 'The server answered without a file.'));
        return;
      }
      const error = (data && data.error) || {};
      const failure = new ApiError(xhr.status, error.code || `http_${xhr.status}`,
        error.message || `Upload failed (${xhr.status}).`, xhr.getResponseHeader('Retry-After'));
      if (failure.code === 'unauthenticated') Session.onUnauthenticated(failure);
      reject(failure);
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, 'network', 'Network error: the upload was cut off.')));
    xhr.addEventListener('abort', () => reject(new ApiError(0, 'aborted', 'The upload was cancelled.')));
    const form = new FormData();
    form.append('file', file, file.name || 'file');
    xhr.send(form);
  });
  return { done, abort: () => xhr.abort() };
}

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
