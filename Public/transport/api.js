// The HTTP API of docs/api.md: JSON in, JSON out, every failure an ApiError (never a silent stall).

/** A failed request: HTTP status (0 for a network failure), the server's error code and message. */
export class ApiError extends Error {
  constructor(status, code, message, retryAfter = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }

  /** A sentence for the person, with the wait time of a 429. */
  describe() {
    if (this.status === 429 && this.code === 'too_many_attempts') {
      const wait = this.retryAfter ? ` Try again in ${this.retryAfter} s.` : ' Try again later.';
      return `Too many failed sign-ins.${wait}`;
    }
    if (this.status === 429) {
      const wait = this.retryAfter ? ` Try again in ${this.retryAfter} s.` : ' Try again shortly.';
      return `Too many replies are running (rate limited).${wait}`;
    }
    if (this.status === 0) return 'Network error: the server could not be reached.';
    return this.message || `Request failed (${this.status}).`;
  }
}

/** The page's sign-in state, set by account.js: `onUnauthenticated` runs on every 401 `unauthenticated`. */
export const Session = {
  team: false,
  onUnauthenticated: () => {},
  /** EventSource cannot see a 401: after a failed stream connection, ask who we are (a 401 shows sign-in). */
  verify() {
    if (this.team) api('GET', '/api/auth/me').catch(() => {});
  },
};

/** A body that is JSON text already (an imported file): sent exactly as read. */
export class JSONText {
  constructor(text) {
    this.text = text;
  }
}

export async function api(method, path, body, signal) {
  const init = { method, headers: { Accept: 'application/json' }, signal };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = body instanceof JSONText ? body.text : JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'network', 'Network error: the server could not be reached.');
  }
  if (response.status === 204) return null;
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    const failure = new ApiError(response.status, error.code || `http_${response.status}`,
      error.message || `Request failed (${response.status}).`, response.headers.get('Retry-After'));
    if (failure.code === 'unauthenticated') Session.onUnauthenticated(failure);
    throw failure;
  }
  return data;
}

const enc = encodeURIComponent;

export const Api = {
  models: () => api('GET', '/api/models'),
  listConversations: (limit, cursor, filters = {}) =>
    api('GET', `/api/conversations?limit=${limit}${cursor ? `&cursor=${enc(cursor)}` : ''}${query(filters)}`),
  /** A conversation with its first `message`: `{conversation, user_message, assistant_message}`. */
  startConversation: (fields) => api('POST', '/api/conversations', fields),
  conversation: (id) => api('GET', `/api/conversations/${enc(id)}`),
  updateConversation: (id, fields) => api('PATCH', `/api/conversations/${enc(id)}`, fields),
  deleteConversation: (id) => api('DELETE', `/api/conversations/${enc(id)}`),
  switchBranch: (id, messageId) => api('PUT', `/api/conversations/${enc(id)}/current`, { message_id: messageId }),
  postMessage: (id, fields) => api('POST', `/api/conversations/${enc(id)}/messages`, fields),
  message: (id) => api('GET', `/api/messages/${enc(id)}`),
  stop: (id) => api('POST', `/api/messages/${enc(id)}/stop`),
  regenerate: (id, fields = {}) => api('POST', `/api/messages/${enc(id)}/regenerate`, fields),
  continueMessage: (id) => api('POST', `/api/messages/${enc(id)}/continue`),
  // Tools (issue 20): the catalogue, and a decision on a call that waits for approval.
  tools: () => api('GET', '/api/tools'),
  decideToolCall: (id, callId, decision, remember) =>
    api('POST', `/api/messages/${enc(id)}/tool_calls/${enc(callId)}`, { decision, remember: Boolean(remember) }),
  // Interactive answers (issue 22): a surface's Button sends its A2UI action; answered like a send.
  surfaceAction: (id, surfaceId, action) =>
    api('POST', `/api/messages/${enc(id)}/surfaces/${enc(surfaceId)}/actions`, action),
  me: () => api('GET', '/api/auth/me'),
  signIn: (username, password) => api('POST', '/api/auth/login', { username, password }),
  signOut: () => api('POST', '/api/auth/logout'),
  changePassword: (current, next) => api('POST', '/api/auth/password', { current, new: next }),
  sessions: () => api('GET', '/api/auth/sessions'),
  revokeSession: (id) => api('DELETE', `/api/auth/sessions/${enc(id)}`),
  tokens: () => api('GET', '/api/tokens'),
  createToken: (name) => api('POST', '/api/tokens', { name }),
  revokeToken: (id) => api('DELETE', `/api/tokens/${enc(id)}`),
  users: () => api('GET', '/api/users'),
  createUser: (fields) => api('POST', '/api/users', fields),
  updateUser: (id, fields) => api('PATCH', `/api/users/${enc(id)}`, fields),
  usage: (id) => api('GET', `/api/users/${enc(id)}/usage`),
  preferences: () => api('GET', '/api/preferences'),
  updatePreferences: (change) => api('PATCH', '/api/preferences', change),
  streamURL: (id, lastEventId) =>
    `/api/messages/${enc(id)}/stream${lastEventId != null ? `?last_event_id=${enc(lastEventId)}` : ''}`,
  // Export and import (history)
  exportURL: (id, format) => `/api/conversations/${enc(id)}/export?format=${enc(format)}`,
  exportAllURL: () => '/api/export',
  importDocument: (text) => api('POST', '/api/import', new JSONText(text)),
  // Attachments (issue 21): an upload is transport/uploads.js (XMLHttpRequest, for its progress).
  fileURL: (id) => `/api/files/${enc(id)}`,
  thumbnailURL: (id) => `/api/files/${enc(id)}?variant=thumb`,
  deleteFile: (id) => api('DELETE', `/api/files/${enc(id)}`),
  // Search, pin/archive (through updateConversation) and fork.
  search: (q, filters, signal) =>
    api('GET', `/api/conversations?q=${enc(q)}&limit=50${query(filters)}`, undefined, signal),
  fork: (id, messageId, title) =>
    api('POST', `/api/conversations/${enc(id)}/fork`, title ? { message_id: messageId, title } : { message_id: messageId }),
};

/** `&key=value` for each filter set (`{pinned: false}`, `{archived: true}`). */
function query(filters) {
  return Object.entries(filters || {})
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([key, value]) => `&${enc(key)}=${enc(String(value))}`).join('');
}

/** The array in a list answer, whether bare or wrapped ({"items": […]}, {"tokens": […]}, …). */
export function listIn(answer, key) {
  if (Array.isArray(answer)) return answer;
  if (!answer) return [];
  return answer[key] || answer.items || answer.data || [];
}
