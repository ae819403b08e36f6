// The person's preferences (GET/PATCH /api/preferences): the theme, what sends a message, and the
// model and system prompt of new conversations. Kept on the server, per user, so they follow the
// person between devices; this module reads them, applies the theme to the page at once
// (`data-theme` on <html>, which app.css prefers over the browser's scheme) and tells its listeners.
// theme.js applies the copy kept in localStorage before the first paint of the next load.
import { Api } from './api.js';

const DEFAULTS = { theme: 'system', default_model: null, default_system_prompt: null, send_key: 'enter' };

/** Shows `theme` (`system`, `light`, `dark`) now, and keeps it for theme.js. */
export function applyTheme(theme) {
  const root = document.documentElement;
  if (theme === 'light' || theme === 'dark') root.dataset.theme = theme;
  else delete root.dataset.theme;
  try {
    if (theme === 'light' || theme === 'dark') localStorage.setItem('parley.theme', theme);
    else localStorage.removeItem('parley.theme');
  } catch {
    // storage disabled: the next load shows the browser's scheme until the server answers
  }
}

export class Preferences {
  constructor() {
    this.values = { ...DEFAULTS };
    this.listeners = [];
    this.loaded = false;
  }

  /** `listener(values)` runs after every load or change. */
  onChange(listener) {
    this.listeners.push(listener);
  }

  get theme() { return this.values.theme; }
  get sendKey() { return this.values.send_key; }
  get defaultModel() { return this.values.default_model; }
  get defaultSystemPrompt() { return this.values.default_system_prompt; }

  /** Reads them from the server (at start, and when another tab changed them). A failure keeps what
   *  is shown: the page works with the defaults. */
  async load() {
    try {
      this.take(await Api.preferences());
    } catch {
      // the defaults (or what was read before) stay
    }
    this.loaded = true;
  }

  /** Saves `change` (any of the four fields); resolves to the whole preferences, or throws the ApiError. */
  async save(change) {
    const saved = await Api.updatePreferences(change);
    this.take(saved);
    return saved;
  }

  take(values) {
    this.values = { ...DEFAULTS, ...values };
    applyTheme(this.values.theme);
    for (const listener of this.listeners) listener(this.values);
  }
}
