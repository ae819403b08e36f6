// The message list: the branch shown, one element per message (view.js builds each), the followed
// reply's events drawn into its element, and the inline editor of a question. Clicks on a message's
// buttons go to one delegated handler, `onAction(action, id, el, button)`.
import {
  createMessageElement, updateMeta, setHTML, setBlocks, putBlock, setTail, appendTail, setTailHTML, applyPatch,
  shownHTML, blockCount, clearError, syncBody, setParts, putToolCard, refreshToolCards, partsHaveCalls, showStoredParts,
} from '../message/view.js';
import { setReasoning, appendReasoning, shownReasoning, syncReasoning } from '../message/reasoning.js';
import { showUsage } from '../message/usage.js';

/** How long a message found by search stays highlighted, and how long the page may take to show it. */
const HIGHLIGHT_MS = 2500;
const REVEAL_WAIT_MS = 8000;

/** A message's element: view.js builds it, and its usage goes in its header. */
function buildElement(message, titleOf) {
  const el = createMessageElement(message, titleOf);
  showUsage(el, message);
  return el;
}

/** The header's status, versions and actions, and the usage of a finished reply. */
function showMeta(el, message) {
  updateMeta(el, message);
  showUsage(el, message);
}

export class MessageList {
  /** `titleOf(toolId)`: a tool's title for its cards, '' when unknown (the controller's catalogue). */
  constructor({ list, empty, onAction, titleOf = () => '' }) {
    this.list = list;
    this.empty = empty;
    this.titleOf = titleOf;
    list.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-action]');
      if (!button || button.disabled) return;
      const el = button.closest('.message');
      if (!el) return;
      onAction(button.dataset.action, el.dataset.id, el, button);
    });
  }

  elementFor(id) {
    return this.list.querySelector(`.message[data-id="${CSS.escape(id)}"]`);
  }

  clear() {
    this.list.replaceChildren();
    this.empty.hidden = false;
  }

  /** A whole branch in one fragment (one layout). */
  show(messages) {
    const fragment = document.createDocumentFragment();
    for (const message of messages) fragment.append(buildElement(message, this.titleOf));
    this.list.replaceChildren(fragment);
    this.empty.hidden = messages.length > 0;
  }

  append(messages) {
    const fragment = document.createDocumentFragment();
    for (const message of messages) fragment.append(buildElement(message, this.titleOf));
    this.list.append(fragment);
    this.empty.hidden = this.list.children.length > 0;
  }

  /** Removes `el` and everything after it (regenerate, edit); returns the ids removed. */
  removeFrom(el) {
    const ids = [];
    let node = el;
    while (node) {
      const next = node.nextElementSibling;
      if (node.dataset.id) ids.push(node.dataset.id);
      node.remove();
      node = next;
    }
    return ids;
  }

  markStreaming(id) {
    const el = this.elementFor(id);
    if (el) {
      el.classList.add('is-streaming');
      el.setAttribute('aria-busy', 'true');
      syncBody(el);
    }
  }

  // MARK: - The followed reply

  /** A snapshot: the whole reply so far. */
  showSnapshot(el, message, data) {
    setBlocks(el, data.blocks || [], data.tail || '', typeof data.tail_html === 'string' ? data.tail_html : null,
      data.parts, this.titleOf);
    setReasoning(el, data.reasoning);
    showMeta(el, { ...message, status: 'streaming' });
    clearError(el);
  }

  /** A piece of the reply: `reasoning`, `block`, `tail`, `tail_append` or `tail_html`. */
  showPiece(el, name, data) {
    switch (name) {
      case 'reasoning':
        appendReasoning(el, data.text);
        syncBody(el);
        break;
      case 'block':
        putBlock(el, data.index, data.html);
        syncReasoning(el);
        break;
      case 'tail':
        setTail(el, data.text || '');
        syncReasoning(el);
        break;
      case 'tail_append':
        appendTail(el, data.text || '');
        syncReasoning(el);
        break;
      case 'tail_html':
        setTailHTML(el, typeof data.html === 'string' ? data.html : null, Number(data.keep) || 0);
        syncReasoning(el);
        break;
      default:
        break;
    }
  }

  /** A tool call's event: its card updated, or made after what is shown (the text before it is closed:
   *  no tail is left, provisional or raw). */
  showToolCall(el, part) {
    if (!part) return;
    if (putToolCard(el, part, this.titleOf)) {
      setTail(el, '');
      setTailHTML(el, null);
    }
    syncReasoning(el);
    syncBody(el);
  }

  /** The cards of `message` shown again from its parts (a decision's answer, titles read later). */
  showToolCalls(el, message) {
    refreshToolCards(el, message.parts, this.titleOf);
    showMeta(el, message);
  }

  /** `done`: the last blocks' patch, no tail, the final status. */
  showDone(el, message, patch) {
    applyPatch(el, patch);
    setTail(el, '');
    setTailHTML(el, null);
    showMeta(el, message);
    if (!message.error) clearError(el);
  }

  /** The stored message: the body is replaced only if what is shown differs from it. */
  showStored(el, message, stored, expectedBlocks) {
    if (partsHaveCalls(stored.parts)) {
      showStoredParts(el, stored.parts, shownHTML(el), this.titleOf);
      if (typeof stored.reasoning === 'string' && shownReasoning(el) !== stored.reasoning) setReasoning(el, stored.reasoning);
      showMeta(el, message);
      return;
    }
    const shown = shownHTML(el);
    const countDiffers = typeof expectedBlocks === 'number' && shown === null
      ? blockCount(el) !== expectedBlocks : false;
    if (typeof stored.html === 'string' && (countDiffers || shown !== stored.html)) setHTML(el, stored.html);
    if (typeof stored.reasoning === 'string' && shownReasoning(el) !== stored.reasoning) {
      setReasoning(el, stored.reasoning);
    }
    showMeta(el, message);
  }

  /** A reply stopped while its stream was not connected: the stored state. */
  showStopped(el, message, stopped) {
    if (partsHaveCalls(stopped.parts)) setParts(el, stopped.parts, this.titleOf);
    else if (typeof stopped.html === 'string') setHTML(el, stopped.html);
    setReasoning(el, stopped.reasoning);
    showMeta(el, message);
  }

  // MARK: - Focus and feedback

  /** After switching versions: the switched-to message in view, the focus on the same arrow. */
  focusVersion(el, step) {
    el.scrollIntoView({ block: 'nearest' });
    const control = el.querySelector(`[data-action="${step < 0 ? 'prev' : 'next'}"]`);
    (control && !control.disabled ? control : el.querySelector('[data-action="copy"]')).focus();
  }

  /**
   * Scrolls message `id` into view and highlights it briefly, once it is shown (a search result was
   * clicked: its conversation may still be loading; only a message on the branch shown is found).
   * `onShown` runs once it is scrolled to (the scroller re-reads whether it is pinned).
   */
  reveal(id, onShown = () => {}) {
    const show = (el) => {
      el.scrollIntoView({ block: 'center' });
      onShown();
      el.classList.add('is-found');
      setTimeout(() => el.classList.remove('is-found'), HIGHLIGHT_MS);
    };
    // The click is handled before the route changes: wait a task so the page starts loading the new
    // conversation (an element of the one shown now must not count).
    setTimeout(() => {
      const found = this.elementFor(id);
      if (found) {
        show(found);
        return;
      }
      const observer = new MutationObserver(() => {
        const el = this.elementFor(id);
        if (!el) return;
        observer.disconnect();
        show(el);
      });
      observer.observe(this.list, { childList: true });
      setTimeout(() => observer.disconnect(), REVEAL_WAIT_MS);
    }, 0);
  }

  /** The code of the code block a copy button belongs to, or null. */
  codeOf(button) {
    const box = button.closest('.codeblock');
    const code = box && box.querySelector('pre');
    return code ? code.textContent : null;
  }

  /** Shows `text` on `button` for a moment. */
  flash(button, text) {
    const original = button.textContent;
    button.textContent = text;
    setTimeout(() => { button.textContent = original; }, 1500);
  }

  // MARK: - Editing a question

  isEditing(el) {
    return el.querySelector('.edit-form') !== null;
  }

  /**
   * Replaces the message's body with an editor of `content`; Escape or Cancel closes it, Enter or
   * Save calls `onSubmit(text, editor)`, where `editor.saving(bool)` disables Save and
   * `editor.submit()` submits again (Retry).
   */
  openEditor(el, content, onSubmit) {
    const body = el.querySelector('.message-body');
    const actions = el.querySelector('.message-actions');
    const form = document.createElement('form');
    form.className = 'edit-form';
    const area = document.createElement('textarea');
    area.value = content || '';
    area.setAttribute('aria-label', 'Edit message');
    area.rows = 3;
    const row = document.createElement('div');
    row.className = 'form-actions';
    const save = document.createElement('button');
    save.type = 'submit';
    save.className = 'button primary small';
    save.textContent = 'Save and send';
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.className = 'button small';
    cancel.textContent = 'Cancel';
    row.append(save, cancel);
    form.append(area, row);
    body.hidden = true;
    actions.hidden = true;
    body.after(form);
    area.focus();

    const close = () => {
      form.remove();
      body.hidden = false;
      actions.hidden = false;
      el.querySelector('[data-action="edit"]').focus();
    };
    cancel.addEventListener('click', close);
    area.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        close();
      } else if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    const editor = {
      saving(on) { save.disabled = on; },
      submit() { form.requestSubmit(); },
    };
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      onSubmit(area.value, editor);
    });
  }
}
