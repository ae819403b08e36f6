// The composer: the message box (Enter sends, Shift+Enter adds a line), Send, and Stop while an
// answer runs. What sending means is the controller's.

const growsByItself = typeof CSS !== 'undefined' && CSS.supports('field-sizing', 'content');

export class Composer {
  /** `onSubmit()` on Enter or Send, `onStop()` on Stop. */
  constructor({ form, input, send, stop, onSubmit, onStop }) {
    this.input = input;
    this.send = send;
    this.stop = stop;
    input.addEventListener('input', () => this.fit());
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing && !event.altKey && !event.ctrlKey && !event.metaKey) {
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

  get text() {
    return this.input.value;
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

  /** Send or Stop, keeping the focus on whichever replaces the other. */
  showStreaming(streaming) {
    const hadFocus = document.activeElement === this.send || document.activeElement === this.stop;
    this.send.hidden = streaming;
    this.stop.hidden = !streaming;
    if (hadFocus) (streaming ? this.stop : this.input).focus();
  }
}
