// The person's preferences (GET/PATCH /api/preferences): the theme, what sends a message, and the
// model and system prompt of new conversations. Kept on the server, per user, so they follow the
// person between devices. A model: it takes what the controller read or saved (app.js makes the
// requests), applies the theme to the page at once (`data-theme` on <html>, which app.css prefers over
// the browser's scheme) and tells its listeners. theme.js applies the copy kept in localStorage before
// the first paint of the next load.

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
  }

  /** `listener(values)` runs after every load or change. */
  onChange(listener) {
    this.listeners.push(listener);
  }

  get theme() { return this.values.theme; }
  get sendKey() { return this.values.send_key; }
  get defaultModel() { return this.values.default_model; }
  get defaultSystemPrompt() { return this.values.default_system_prompt; }

  /** The preferences as the server answered (read at start, after another tab changed them, or
   *  saved): applied and told. */
  take(values) {
    this.values = { ...DEFAULTS, ...values };
    applyTheme(this.values.theme);
    for (const listener of this.listeners) listener(this.values);
  }
}
