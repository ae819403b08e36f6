// Sending a question, a part of the controller (app.js): from the composer, creating the conversation
// first on a fresh page (with the model chosen and the settings saved for it), then following the
// answer. A failed send stays on the page as a message with Retry; a first send refused for its
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
      if (!model.conversation) {
        await page.ready;
        const fields = { title: titleFrom(text) };
        if (topbar.model) fields.model = topbar.model;
        Object.assign(fields, model.pendingFields());
        page.showCreated(await Api.createConversation(fields));
      }
      const conversationId = model.conversation.id;
      const fields = { content: text };
      if (files.length) fields.attachments = files.map((file) => file.id);
      const result = await Api.postMessage(conversationId, fields);
      if (model.openId !== conversationId) return;
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
