// Sending a question, a part of the controller (app.js): from the composer, on a fresh page creating
// the conversation with it in one request (with the model chosen and the settings saved for it), then
// following the answer. A failed send stays on the page as a message with Retry; a first send refused for its
// settings opens the settings dialog on the field the server named.
import { Api } from '../transport/api.js';
import { titleFrom } from './conversation.js';
import { showError, clearError, setStatusText } from '../message/view.js';

/** `page` gives the model, the views (`composer`, `messages`, `topbar`, `settings`, `scroller`),
 *  `replies`, the controller's `showCreated`, `appendMessages`, `touch`, `announce`, `describe`, and
 *  `ready` (a promise: the models and preferences read, before a first send). */
export function sender(page) {
  const { model, composer, messages, topbar, settings, scroller, announce, describe } = page;

  function sendFromComposer() {
    const text = composer.text;
    const { attachments } = page;
    if (model.streamingId || model.sending) return;
    if (attachments.uploading) {
      announce('Wait for the attached files to finish uploading.');
      return;
    }
    if (!text.trim() && !attachments.hasReady) return;
    const files = attachments.take();
    composer.clear();
    send(text, null, files);
  }

  /** Sends `text` with `files` (attaching.js: `[{id, part}]`, uploaded already); on failure it stays on
   *  the page as a failed message (showing the files) with Retry, which sends the same files. */
  async function send(text, failedEl, files = []) {
    model.startSending();
    try {
      const message = { content: text };
      if (files.length) message.attachments = files.map((file) => file.id);
      let result;
      if (!model.conversation) {
        // A new chat: the conversation and its first message in one request (nothing is made if
        // either is refused, so a Retry starts over the same way).
        await page.ready;
        const fields = { title: titleFrom(text), message };
        if (topbar.model) fields.model = topbar.model;
        Object.assign(fields, model.pendingFields());
        result = await Api.startConversation(fields);
        if (model.conversation) return; // another conversation was opened meanwhile
        page.showCreated(result.conversation);
      } else {
        const conversationId = model.conversation.id;
        result = await Api.postMessage(conversationId, message);
        if (model.openId !== conversationId) return;
      }
      if (failedEl) failedEl.remove();
      page.appendMessages([result.user_message, result.assistant_message]);
      page.touch(result.assistant_message.id);
      scroller.bottomNow();
      page.replies.follow(result.assistant_message.id);
    } catch (error) {
      if (!model.conversation) settings.refusedOnCreate(error);
      showFailedSend(text, files, error, failedEl);
    } finally {
      model.endSending();
    }
  }

  function showFailedSend(text, files, error, failedEl) {
    let el = failedEl;
    if (!el) {
      const message = model.unsent(text, files.map((file) => file.part));
      page.appendMessages([message]);
      el = messages.elementFor(message.id);
      setStatusText(el, 'Not sent');
    }
    showError(el, `Not sent: ${describe(error)}`, () => {
      clearError(el);
      send(text, el, files);
    });
    announce(`The message was not sent. ${describe(error)}`);
    scroller.bottomNow();
  }

  return { sendFromComposer };
}
