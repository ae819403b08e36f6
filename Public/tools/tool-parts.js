// A reply's tool calls as plain objects, for the model (chat/conversation.js): the `parts` of a
// message or a snapshot, and the reply stream's `tool_call`, `tool_call_delta` and `tool_result` events
// applied to them. No DOM, no network. A call part is {type: 'tool_call', id, tool, name, provider_id,
// arguments_text, arguments, status, decision, result, round}; see docs/api.md.

/** Statuses of a call still under way (a spinner shows); the others are final or wait for the person. */
export const RUNNING_STATUSES = new Set(['streaming', 'running']);

/** The tool call parts of `message` (none for a reply without tools). */
export function toolCalls(message) {
  return (message && Array.isArray(message.parts) ? message.parts : []).filter((part) => part.type === 'tool_call');
}

/** Whether `message` shows any tool call: then its body is drawn from its parts. */
export function hasToolCalls(message) {
  return toolCalls(message).length > 0;
}

/** The call `id` of `message`, or null. */
export function toolCall(message, id) {
  return toolCalls(message).find((part) => part.id === id) || null;
}

/** Whether the call waits for the person's decision (Approve or Deny offered). */
export function awaitsDecision(part) {
  return part.status === 'awaiting_approval' && !part.decision;
}

/** Applies `tool_call`, `tool_call_delta` or `tool_result` to `message.parts`; returns the call's part
 *  (made at its first event, placed after the parts known so far), or null for an event without id. */
export function applyToolEvent(message, name, data) {
  if (!data || typeof data.id !== 'string') return null;
  if (!Array.isArray(message.parts)) message.parts = [];
  let part = toolCall(message, data.id);
  if (!part) {
    part = { type: 'tool_call', id: data.id, tool: data.tool || '', name: data.name || '', provider_id: data.provider_id || '',
      arguments_text: '', arguments: null, status: 'streaming', decision: null, result: null };
    message.parts.push(part);
  }
  switch (name) {
    case 'tool_call':
      for (const key of ['tool', 'name', 'provider_id', 'status', 'decision']) {
        if (data[key] !== undefined) part[key] = data[key];
      }
      if (data.arguments !== undefined) part.arguments = data.arguments;
      break;
    case 'tool_call_delta':
      if (typeof data.arguments_delta === 'string') part.arguments_text = (part.arguments_text || '') + data.arguments_delta;
      break;
    case 'tool_result':
      if (data.status) part.status = data.status;
      part.result = data.result ?? null;
      break;
    default:
      break;
  }
  return part;
}

/** The arguments as shown: pretty JSON once they parse (the parsed `arguments`, or the raw text when it
 *  is JSON already), else the raw text as the model wrote it so far. */
export function argumentsText(part) {
  if (part.arguments !== null && part.arguments !== undefined) return JSON.stringify(part.arguments, null, 2);
  const raw = part.arguments_text || '';
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}
