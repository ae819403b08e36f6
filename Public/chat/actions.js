// Message actions, a part of the controller (app.js): the buttons of each message (copy, copy code,
// edit, regenerate, continue, previous and next version, retry, fork, an attached image opened larger;
// a tool card's Approve and Deny go to approvals.js), through one delegated handler.
import { Api } from '../transport/api.js';
import { copyText } from '../shared/clipboard.js';
import { updateMeta, showError, clearError } from '../message/view.js';

/** `page` gives the parts the actions use (`conversations`: the list) and the controller's `render(conversation)`,
 *  `replaceFrom(el, messages)` and `touch(leafId)`. Returns `act(action, id, el, button)` (the list's
 *  delegated click handler) and `regenerate(id)` (also the Retry of a failed answer). */
export function messageActions(page) {
  const { model, messages, composer, scroller, live, replies, announce, describe, conversations } = page;

  function act(action, id, el, button) {
    switch (action) {
      case 'copy': copyMessage(id, button); break;
      case 'copy-code': copyCode(button); break;
      case 'edit': startEdit(el); break;
      case 'regenerate': regenerate(id); break;
      case 'continue': continueAnswer(id); break;
      case 'prev': switchSibling(id, -1); break;
      case 'next': switchSibling(id, +1); break;
      case 'fork': fork(id, el, button); break;
      case 'tool-approve': page.approvals.decide(id, el, button, 'approve'); break;
      case 'tool-deny': page.approvals.decide(id, el, button, 'deny'); break;
      case 'view-image': page.imageViewer.open({ url: Api.fileURL(button.dataset.fileId),
        downloadURL: Api.fileURL(button.dataset.fileId), filename: button.dataset.filename, opener: button }); break;
      case 'retry': if (typeof el.retry === 'function') { const retry = el.retry; clearError(el); retry(); } break;
      default: break;
    }
  }

  function busy(el) {
    if (model.streamingId || model.sending) {
      if (el) announce('Wait for the current answer to finish, or stop it first.');
      return true;
    }
    return false;
  }

  function flash(button, text) {
    messages.flash(button, text);
    announce(text);
  }

  async function copyMessage(id, button) {
    const message = model.messages.get(id);
    if (!message) return;
    let content = message.content;
    if (typeof content !== 'string' || message.status === 'streaming') {
      try {
        content = (await Api.message(id)).content;
      } catch (error) {
        announce(`Could not copy: ${describe(error)}`);
        return;
      }
    }
    flash(button, (await copyText(content)) ? 'Copied' : 'Copy failed');
  }

  async function copyCode(button) {
    const code = messages.codeOf(button);
    if (code === null) return;
    flash(button, (await copyText(code)) ? 'Copied' : 'Copy failed');
  }

  async function regenerate(id) {
    const el = messages.elementFor(id);
    if (!el || busy(el)) return;
    const old = model.messages.get(id);
    model.startSending();
    try {
      const fresh = await Api.regenerate(id, {});
      page.replaceFrom(el, [model.markNewVersion(fresh, old, id)]);
      page.touch(fresh.id);
      scroller.stick();
      replies.follow(fresh.id);
    } catch (error) {
      showError(el, `Could not regenerate: ${describe(error)}`, () => regenerate(id));
    } finally {
      model.endSending();
    }
  }

  async function continueAnswer(id) {
    const el = messages.elementFor(id);
    if (!el || busy(el)) return;
    model.startSending();
    try {
      const merged = model.continued(id, await Api.continueMessage(id));
      clearError(el);
      updateMeta(el, merged);
      page.touch(id);
      scroller.stick();
      replies.follow(id);
    } catch (error) {
      showError(el, `Could not continue: ${describe(error)}`, () => continueAnswer(id));
    } finally {
      model.endSending();
    }
  }

  async function switchSibling(id, step) {
    const message = model.messages.get(id);
    if (!message || !message.siblings || !model.conversation) return;
    const target = message.siblings.ids[message.siblings.index + step];
    if (!target) return;
    if (model.streamingId) live.close();
    try {
      const conversation = await Api.switchBranch(model.conversation.id, target);
      page.render(conversation);
      const el = messages.elementFor(target);
      if (el) messages.focusVersion(el, step);
      scroller.measure();
      const position = conversation.messages.find((item) => item.id === target);
      if (position && position.siblings) {
        announce(`Version ${position.siblings.index + 1} of ${position.siblings.count}.`);
      }
    } catch (error) {
      const el = messages.elementFor(id);
      if (el) showError(el, `Could not switch version: ${describe(error)}`, () => switchSibling(id, step));
    }
  }

  function startEdit(el) {
    const id = el.dataset.id;
    const message = model.messages.get(id);
    if (!message || busy(el) || messages.isEditing(el)) return;
    messages.openEditor(el, message.content, async (text, editor) => {
      if (!text.trim() || busy(el) || !model.conversation) return;
      model.startSending();
      editor.saving(true);
      try {
        const result = await Api.postMessage(model.conversation.id, { content: text, parent_id: message.parent_id ?? null });
        page.replaceFrom(el, [model.markNewVersion(result.user_message, message, id), result.assistant_message]);
        page.touch(result.assistant_message.id);
        scroller.bottomNow();
        replies.follow(result.assistant_message.id);
        composer.focus();
      } catch (error) {
        editor.saving(false);
        showError(el, `Not sent: ${describe(error)}`, () => editor.submit());
      } finally {
        model.endSending();
      }
    });
  }

  /** Copies the branch up to this message into a new conversation, then opens it (unless the person
   *  has meanwhile opened another one: then it is only listed and announced). */
  async function fork(id, el, button) {
    const conversation = model.conversation;
    const message = model.messages.get(id);
    if (!conversation || !message || message.local) return;
    const sequence = model.loadSequence; // changes when another conversation starts loading
    button.disabled = true;
    try {
      const created = await Api.fork(conversation.id, id, forkTitle(conversation.title));
      clearError(el);
      conversations.upsert(created);
      const count = created.messages ? created.messages.length : 'the';
      if (model.loadSequence !== sequence || model.openId !== conversation.id) {
        announce(`Forked into a new conversation, “${created.title}”, with ${count} messages; it is in the list.`);
        return;
      }
      location.hash = `#/c/${encodeURIComponent(created.id)}`;
      composer.focus(); // the Fork button goes with the old branch; the next step is to write
      announce(`Forked into a new conversation, “${created.title}”, with ${count} messages up to this one.`);
    } catch (error) {
      showError(el, `Could not fork: ${describe(error)}`, () => fork(id, el, button));
      announce(`Could not fork: ${describe(error)}`);
    } finally {
      button.disabled = false;
    }
  }

  return { act, regenerate };
}

const FORK_PREFIX = 'Fork of ';
const MAX_TITLE_CHARS = 200;

/** "Fork of …" (at most 200 code points), so that the copy is told apart in the list; one not named
 *  yet ("New conversation") is copied with the server's title as it is. */
function forkTitle(title) {
  if (!title || title === 'New conversation') return undefined;
  return Array.from(FORK_PREFIX + title).slice(0, MAX_TITLE_CHARS).join('');
}
