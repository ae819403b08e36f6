// Token usage: a finished reply's figures in its header ("12 in · 80 out"), and a conversation's
// totals for the settings form. An estimate (the provider reported none) is marked "≈" on screen
// and said as "estimated" to screen readers.

const number = new Intl.NumberFormat('en'); // the page's language

/** The usage element of a message's header, made on first use (the template stays unchanged). */
function usageElement(el) {
  let span = el.querySelector('.message-usage');
  if (!span) {
    span = document.createElement('span');
    span.className = 'message-usage';
    const shown = document.createElement('span');
    shown.setAttribute('aria-hidden', 'true');
    const spoken = document.createElement('span');
    spoken.className = 'visually-hidden';
    span.append(shown, spoken);
    el.querySelector('.message-head').append(span);
  }
  return span;
}

/** Shows `message.usage` on a finished assistant message; hides it otherwise (a user message, a
 *  streaming reply, a reply without figures). */
export function showUsage(el, message) {
  const usage = message.usage;
  const shown = message.role === 'assistant' && message.status !== 'streaming' && usage &&
    typeof usage.input_tokens === 'number' && typeof usage.output_tokens === 'number';
  const existing = el.querySelector('.message-usage');
  if (!shown) {
    if (existing) existing.hidden = true;
    return;
  }
  const span = usageElement(el);
  const estimated = usage.estimated === true;
  const inTokens = number.format(usage.input_tokens);
  const outTokens = number.format(usage.output_tokens);
  span.hidden = false;
  span.dataset.estimated = String(estimated);
  span.title = estimated
    ? 'Tokens, estimated: the provider reported no usage for this reply'
    : 'Tokens, as the provider reported them';
  span.firstElementChild.textContent = `${estimated ? '≈ ' : ''}${inTokens} in · ${outTokens} out`;
  span.lastElementChild.textContent =
    `Tokens: ${inTokens} in, ${outTokens} out${estimated ? ' (estimated)' : ''}.`;
}

/** A conversation's totals as a sentence, or '' before its first finished reply. */
export function totalsText(usage) {
  if (!usage || !usage.replies) return '';
  const replies = `${number.format(usage.replies)} ${usage.replies === 1 ? 'reply' : 'replies'}`;
  const estimated = usage.estimated_replies
    ? ` (${number.format(usage.estimated_replies)} estimated)` : '';
  return `Tokens used in this conversation: ${number.format(usage.input_tokens)} in · ` +
    `${number.format(usage.output_tokens)} out over ${replies}${estimated}.`;
}
