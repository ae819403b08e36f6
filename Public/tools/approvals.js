// Decisions on tool calls that wait for the person, a part of the controller (app.js): a card's Approve
// or Deny (with "Always allow this tool") is POSTed, the answer (the stored message) goes to the model,
// then to the card; when it was the last call waiting, the reply resumes (`streaming` again) and is
// followed as after a continue: the stream reopens and its snapshot redraws the reply.
import { Api } from '../transport/api.js';
import { showError, clearError } from '../message/view.js';
import { remembers, setDeciding } from './tool-card.js';

/** `page` gives the model, the message list, the scroller, `replies` (read when used), `touch(id)`,
 *  `announce(text)` and `describe(error)`. Returns `decide(messageId, el, button, decision)`. */
export function toolApprovals(page) {
  const { model, messages, scroller, announce, describe } = page;

  /** `decision`: 'approve' or 'deny', from `button` on a card of message element `el`. */
  async function decide(messageId, el, button, decision) {
    const card = button.closest('.tool-card');
    if (!card || model.sending) return;
    const callId = card.dataset.callId;
    const remember = decision === 'approve' && remembers(card);
    setDeciding(card, true);
    model.startSending();
    try {
      const answer = await Api.decideToolCall(messageId, callId, decision, remember);
      const message = model.decided(messageId, answer);
      clearError(el);
      messages.showToolCalls(el, message);
      if (message.status === 'streaming') {
        page.touch(messageId);
        scroller.stick();
        page.replies.follow(messageId);
      } else {
        announce(decision === 'approve' ? 'Approved.' : 'Denied: the tool will not run.');
      }
      focusAfter(el, card);
    } catch (error) {
      setDeciding(card, false);
      showError(el, `Could not ${decision} the tool call: ${describe(error)}`, () => decide(messageId, el, button, decision));
      announce(`Could not ${decision} the tool call: ${describe(error)}`);
    }
    model.endSending();
  }

  /** The buttons just used are gone: the focus goes to the next call still waiting, else to the card. */
  function focusAfter(el, card) {
    if (card.contains(document.activeElement) && !card.querySelector('.tool-card-approval').hidden) return;
    const next = el.querySelector('.tool-card-approval:not([hidden]) [data-action="tool-approve"]');
    if (next) {
      next.focus();
    } else if (card.isConnected) {
      card.tabIndex = -1;
      card.focus();
    }
  }

  return { decide };
}
