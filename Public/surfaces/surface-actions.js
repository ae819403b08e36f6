// What a surface's Button does, a part of the controller (app.js): an A2UI action goes to
// POST /api/messages/{id}/surfaces/{surface_id}/actions, which makes a user turn and starts a reply
// like a send (followed here the same way); an `openUrl` call opens an https: address in a new tab,
// after the person said yes to the address shown in full.
import { Api } from '../transport/api.js';

/** `page` gives the model, `scroller`, `announce`, `describe`, the controller's `appendMessages`,
 *  `touch` and `replies` (read when used). Returns `send(replyId, action)` (a promise of an error's
 *  description, or null) and `openUrl(url)`. */
export function surfaceActions(page) {
  const { model, scroller, announce, describe } = page;

  async function send(replyId, action) {
    if (model.streamingId || model.sending) {
      const words = 'Wait for the current answer to finish, or stop it first.';
      announce(words);
      return words;
    }
    const conversationId = model.openId;
    model.startSending();
    try {
      const result = await Api.surfaceAction(replyId, action.surfaceId, action);
      if (model.openId !== conversationId) return null;
      page.appendMessages([result.user_message, result.assistant_message]);
      page.touch(result.assistant_message.id);
      scroller.bottomNow();
      page.replies.follow(result.assistant_message.id);
      return null;
    } catch (error) {
      const words = describe(error);
      announce(`The action was not sent. ${words}`);
      return words;
    } finally {
      model.endSending();
    }
  }

  function openUrl(text) {
    let url = null;
    try {
      url = new URL(text);
    } catch {
      url = null;
    }
    if (!url || url.protocol !== 'https:') {
      announce('This link was not opened: only https addresses are.');
      return;
    }
    // The model chose the address: the person sees all of it and decides.
    if (window.confirm(`Open this link in a new tab?\n\n${url.href}`)) window.open(url.href, '_blank', 'noopener,noreferrer');
  }

  return { send, openUrl };
}
