// The empty state of a fresh page: which model will answer, how to send (the send key preference),
// and a few example prompts; choosing one puts it in the composer (`onExample(text)`), to edit or send.

const HINTS = {
  enter: 'Type a message below and press Enter. Shift+Enter adds a new line.',
  ctrl_enter: 'Type a message below and press Ctrl+Enter (⌘+Enter on a Mac) to send. Enter adds a new line.',
};

export class EmptyState {
  /** `ui`: model (the span naming it), hint, examples (the list of example buttons). */
  constructor(ui, { onExample }) {
    this.ui = ui;
    ui.examples.addEventListener('click', (event) => {
      const button = event.target.closest('button');
      if (button) onExample(button.textContent);
    });
  }

  /** Names the model that answers a first message (its label as the picker shows it). */
  showModel(label) {
    this.ui.model.textContent = label ? ` with ${label}` : '';
  }

  showSendKey(key) {
    this.ui.hint.textContent = HINTS[key] || HINTS.enter;
  }
}
