// The Preferences dialog (sidebar foot): theme, model and system prompt for new conversations, send
// key. A theme chosen shows at once; Save keeps everything on the server, Close without saving puts
// the saved theme back. The server's refusal (naming the field) is shown as it says it.
import { applyTheme } from './preferences.js';
import { shortLabel } from '../chat/topbar.js';

export class PreferencesDialog {
  /** `ui`: open, dialog, form, model, prompt, status, close. `preferences`: the Preferences (read
   *  only); `models()` the models offered (GET /api/models); `describe(error)` words a failure.
   *  `onOpen()` resolves once they are read again; `onSave(change)` once saved, or throws the ApiError. */
  constructor(ui, { preferences, models, describe, onOpen, onSave }) {
    Object.assign(this, { ui, preferences, models, describe, onOpen, onSave });
    ui.open.addEventListener('click', () => this.open());
    ui.close.addEventListener('click', () => ui.dialog.close());
    ui.dialog.addEventListener('close', () => applyTheme(this.preferences.theme));
    ui.form.addEventListener('change', (event) => {
      if (event.target.name === 'theme') applyTheme(event.target.value);
    });
    ui.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.save();
    });
  }

  radios(name) {
    return Array.from(this.ui.form.elements[name]);
  }

  async open() {
    this.setStatus('');
    this.ui.dialog.showModal();
    await this.onOpen(); // another device may have changed them
    this.fill(this.preferences.values);
  }

  fill(values) {
    for (const radio of this.radios('theme')) radio.checked = radio.value === values.theme;
    for (const radio of this.radios('send_key')) radio.checked = radio.value === values.send_key;
    const select = this.ui.model;
    const options = [new Option("The server's default", '')];
    for (const model of this.models()) {
      const option = new Option(shortLabel(model.label || model.id), model.id);
      option.title = model.label || model.id;
      options.push(option);
    }
    if (values.default_model && !options.some((option) => option.value === values.default_model)) {
      options.push(new Option(`${values.default_model} (unavailable)`, values.default_model));
    }
    select.replaceChildren(...options);
    select.value = values.default_model || '';
    this.ui.prompt.value = values.default_system_prompt || '';
  }

  setStatus(text, error = false) {
    this.ui.status.textContent = text;
    this.ui.status.classList.toggle('is-error', error);
  }

  async save() {
    const checked = (name) => (this.radios(name).find((radio) => radio.checked) || {}).value;
    const change = {
      theme: checked('theme') || 'system',
      send_key: checked('send_key') || 'enter',
      default_model: this.ui.model.value || null,
      default_system_prompt: this.ui.prompt.value.trim() ? this.ui.prompt.value : null,
    };
    try {
      await this.onSave(change);
      this.setStatus('Saved.');
    } catch (error) {
      this.setStatus(`Not saved: ${this.describe(error)}`, true);
    }
  }
}
