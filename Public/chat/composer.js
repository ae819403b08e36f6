// The composer: the message box (Enter sends and Shift+Enter adds a line, or with the send key
// preference `ctrl_enter` Ctrl/Cmd+Enter sends and Enter adds a line), Send, and Stop while an answer
// runs. What sending means is the controller's.

const PLACEHOLDERS = {
  enter: 'Message Parley (Enter to send, Shift+Enter for a new line)',
  ctrl_enter: 'Message Parley (Ctrl+Enter to send, Enter for a new line)',
};

const growsByItself = typeof CSS !== 'undefined' && CSS.supports('field-sizing', 'content');

export class Composer {
  /** `onSubmit()` on Enter or Send, `onStop()` on Stop. */
  constructor({ form, input, send, stop, onSubmit, onStop }) {
    this.input = input;
    this.send = send;
    this.stop = stop;
    this.sendKey = 'enter';
    input.addEventListener('input', () => this.fit());
    input.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter' || event.isComposing || event.altKey || event.shiftKey) return;
      const modified = event.ctrlKey || event.metaKey;
      if (this.sendKey === 'ctrl_enter' ? modified : !modified) {
        event.preventDefault();
        onSubmit();
      }
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      onSubmit();
    });
    stop.addEventListener('click', onStop);
  }

  /** `enter` or `ctrl_enter` (the preference): which key sends; the placeholder says it. */
  setSendKey(key) {
    this.sendKey = key === 'ctrl_enter' ? 'ctrl_enter' : 'enter';
    this.input.placeholder = PLACEHOLDERS[this.sendKey];
  }

  get text() {
    return this.input.value;
  }

  /** Puts `text` in the box (an example prompt), ready to edit or send. */
  fill(text) {
    this.input.value = text;
    this.fit();
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
  }

  clear() {
    this.input.value = '';
    this.fit();
  }

  focus() {
    this.input.focus();
  }

  /** Grows the box with its lines where CSS cannot (`field-sizing`). */
  fit() {
    if (growsByItself) return;
    const lines = this.input.value.split('\n').length;
    this.input.rows = Math.min(Math.max(lines, 1), 10);
  }

  /** While attached files upload, Send waits (disabled, and says why). */
  setWaitingForUploads(waiting) {
    this.send.disabled = waiting;
    this.send.title = waiting ? 'Wait for the attached files to finish uploading' : '';
  }

  /** Send or Stop, keeping the focus on whichever replaces the other. */
  showStreaming(streaming) {
    const hadFocus = document.activeElement === this.send || document.activeElement === this.stop;
    this.send.hidden = streaming;
    this.stop.hidden = !streaming;
    if (hadFocus) (streaming ? this.stop : this.input).focus();
  }
}
