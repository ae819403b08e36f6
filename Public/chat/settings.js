// The "Chat settings" dialog beside the model menu: the open conversation's system prompt and the generation settings
// (temperature, top_p, max_tokens; empty means the provider's default and is sent as null), the tools
// the model may call (tools/tool-picker.js), with the conversation's token totals. On a fresh page the settings wait for the conversation the first send
// creates. Values are checked here first; whatever the server still refuses is shown as it says it.
// A view: it reads the model and raises intents (`onSave`, `onRead`); saving and reading are the
// controller's (conversation-edits.js), never requests made here.
import { ApiError } from '../transport/api.js';
import { totalsText } from '../message/usage.js';
import { ToolPicker } from '../tools/tool-picker.js';

/** The numeric fields, their input's key in `ui` and the ranges of docs/api.md "Field rules". The
 *  server's max_tokens limit is configurable (PARLEY_MAX_TOKENS_LIMIT), so only the server checks it. */
const NUMBERS = [
  { key: 'temperature', input: 'temperature', label: 'Temperature', min: 0, max: 2, integer: false },
  { key: 'top_p', input: 'topP', label: 'Top P', min: 0, max: 1, integer: false },
  { key: 'max_tokens', input: 'maxTokens', label: 'Max tokens', min: 1, max: null, integer: true },
];

function rule(field) {
  if (field.integer) return `${field.label} must be a whole number of at least ${field.min}`;
  return `${field.label} must be a number from ${field.min} to ${field.max}`;
}

export class SettingsForm {
  /** `ui`: toggle, dialog, form, prompt, temperature, topP, maxTokens, toolsList, toolsStatus, usage, status, cancel. `model` is the
   *  ConversationModel (read only); `describe(error)` words a failure. `onSave(fields)` resolves to
   *  'pending' (kept for the first send), 'saved', or null (another conversation is open now), or
   *  throws the ApiError; `onRead()` resolves to the open conversation read again (its settings taken
   *  by the model), or null; `onTools()` resolves to the tools one may use (GET /api/tools). */
  constructor(ui, { model, describe, onSave, onRead, onTools = async () => [] }) {
    this.ui = ui;
    this.model = model;
    this.describe = describe;
    this.onSave = onSave;
    this.onRead = onRead;
    this.onTools = onTools;
    this.tools = new ToolPicker({ list: ui.toolsList, status: ui.toolsStatus });
    this.filled = null; // the values last put in the fields: differing ones are being edited
    this.filledFor = null; // the conversation they belong to (null: a fresh page)

    // A modal dialog: Escape closes it (the browser's own), and the focus goes back to the button.
    ui.toggle.addEventListener('click', () => this.open());
    ui.cancel.addEventListener('click', () => this.close());
    ui.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.save();
    });
  }

  get isOpen() {
    return this.ui.dialog.open;
  }

  open() {
    if (!this.isOpen) this.ui.dialog.showModal();
    this.fill(this.current());
    this.setStatus('');
    this.ui.prompt.focus();
    this.reload(); // the totals and another tab's changes
    this.loadTools();
  }

  /** The tools list, read once (again after a failure); what it ticks is the conversation's `tools`. */
  async loadTools() {
    if (this.tools.items) return;
    this.tools.showLoading();
    try {
      const items = await this.onTools();
      const editing = this.isEditing();
      this.tools.show(items);
      if (this.filled && !editing) this.filled = this.raw();
    } catch (error) {
      this.tools.showFailure(this.describe(error));
    }
  }

  close() {
    if (this.isOpen) this.ui.dialog.close();
  }

  /** A fresh page: nothing open, the form closed. */
  showFresh() {
    this.close();
  }

  /** The open conversation's fields changed (loaded, or read again): shown unless being edited. */
  showConversation() {
    const other = this.filledFor !== this.model.openId; // edits of another conversation are dropped
    if (this.isOpen && (other || !this.isEditing())) this.fill(this.current());
  }

  /** Another tab changed the open conversation: its summary does not carry the settings, so an
   *  open form reads them again (a closed one reads them when it opens). */
  changedElsewhere() {
    if (this.isOpen) this.reload();
  }

  // MARK: - Values

  /** The settings to show: the open conversation's, or those waiting for the first send. */
  current() {
    const source = this.model.conversation || this.model.pendingSettings;
    return {
      system_prompt: source.system_prompt ?? null,
      temperature: source.temperature ?? null,
      top_p: source.top_p ?? null,
      max_tokens: source.max_tokens ?? null,
      tools: source.tools ?? [],
      usage: this.model.conversation ? this.model.conversation.usage : null,
    };
  }

  fill(values) {
    const { ui } = this;
    ui.prompt.value = values.system_prompt || '';
    for (const field of NUMBERS) {
      const input = ui[field.input];
      input.value = values[field.key] == null ? '' : String(values[field.key]);
      input.removeAttribute('aria-invalid');
    }
    this.tools.select(values.tools);
    this.filled = this.raw();
    this.filledFor = this.model.openId;
    this.showTotals(values.usage);
  }

  showTotals(usage) {
    const text = totalsText(usage);
    this.ui.usage.textContent = text;
    this.ui.usage.hidden = text === '';
  }

  raw() {
    const { ui } = this;
    return [ui.prompt.value, ...NUMBERS.map((field) => ui[field.input].value), this.tools.key()];
  }

  /** Whether the person has changed a field since it was filled (or typed what is not a number). */
  isEditing() {
    if (!this.filled) return false;
    const now = this.raw();
    return now.some((value, index) => value !== this.filled[index]) ||
      NUMBERS.some((field) => this.ui[field.input].validity.badInput);
  }

  /** The fields to send, or null after showing what is wrong. */
  validated() {
    const fields = { system_prompt: this.ui.prompt.value.trim() || null };
    for (const field of NUMBERS) {
      const input = this.ui[field.input];
      input.removeAttribute('aria-invalid');
      const text = input.value.trim();
      if (text === '' && !input.validity.badInput) {
        fields[field.key] = null;
        continue;
      }
      const value = Number(text);
      const bad = text === '' || !Number.isFinite(value) || (field.integer && !Number.isInteger(value)) ||
        value < field.min || (field.max !== null && value > field.max);
      if (bad) {
        this.refuse(input, `Not saved: ${rule(field)}, or empty for the model's default.`);
        return null;
      }
      fields[field.key] = value;
    }
    const tools = this.tools.selection(); // null: the list is not shown, the field stays as it is
    if (tools) fields.tools = tools;
    return fields;
  }

  refuse(input, text) {
    input.setAttribute('aria-invalid', 'true');
    this.setStatus(text, true);
    input.focus();
  }

  setStatus(text, error = false) {
    this.ui.status.textContent = text;
    this.ui.status.classList.toggle('is-error', error);
  }

  // MARK: - Saving and reading

  async save() {
    const fields = this.validated();
    if (!fields) return;
    try {
      const outcome = await this.onSave(fields);
      if (!outcome) return;
      this.fill(this.current());
      this.setStatus(outcome === 'pending' ? 'Saved for the new conversation.' : 'Saved.');
    } catch (error) {
      // The server's words; the field it names is marked.
      const named = NUMBERS.find((field) => error instanceof ApiError && error.message.includes(`'${field.key}'`));
      if (named) this.refuse(this.ui[named.input], `Not saved: ${this.describe(error)}`);
      else this.setStatus(`Not saved: ${this.describe(error)}`, true);
    }
  }

  /** A first send refused because of the settings saved for it (a limit only the server knows, such as
   *  max_tokens): the form opens with the field the server named marked, for the person to fix it and
   *  press the failed message's Retry. */
  refusedOnCreate(error) {
    const named = NUMBERS.find((field) => error instanceof ApiError && error.status === 400 &&
      error.message.includes(`'${field.key}'`));
    if (!named) return;
    this.open();
    this.refuse(this.ui[named.input], `Not sent: ${this.describe(error)} Change it, save, then Retry.`);
  }

  /** Asks for the open conversation again and shows its settings (unless being edited) and totals. */
  async reload() {
    const fresh = await this.onRead();
    if (!fresh || !this.isOpen) return;
    if (this.isEditing()) this.showTotals(fresh.usage);
    else this.fill(this.current());
  }
}
