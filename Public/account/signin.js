// Team mode's sign-in form. It replaces the chat whenever the server answers 401 `unauthenticated`
// (at load, on any API call, after a failed event stream). A successful sign-in reloads the page, so
// every part starts again as the new caller and nothing of an earlier one stays in memory.
import { Api, ApiError } from '../transport/api.js';

export class SignInForm {
  constructor({ section, form, username, password, error, submit, app }) {
    Object.assign(this, { section, form, username, password, error, submit, app });
    this.waitTimer = null;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.signIn();
    });
  }

  get shown() { return !this.section.hidden; }

  /** Hides the chat (and any open dialog) and asks for a username and password. */
  show() {
    if (this.shown) return;
    for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close();
    this.app.hidden = true;
    this.app.inert = true;
    this.section.hidden = false;
    document.title = 'Sign in · Parley';
    this.username.focus();
  }

  async signIn() {
    const username = this.username.value.trim();
    const password = this.password.value;
    if (!username || !password) {
      this.error.textContent = 'Enter your username and your password.';
      (username ? this.password : this.username).focus();
      return;
    }
    this.error.textContent = '';
    this.submit.disabled = true;
    try {
      await Api.signIn(username, password);
      location.reload();
      return;
    } catch (error) {
      this.password.value = '';
      this.error.textContent = describeFailure(error);
      this.password.focus();
      if (error instanceof ApiError && error.status === 429) {
        this.holdFor(Number(error.retryAfter) || 5);
        return;
      }
    }
    this.submit.disabled = false;
  }

  /** After a 429 the button stays off until the server's Retry-After has passed. */
  holdFor(seconds) {
    clearTimeout(this.waitTimer);
    this.waitTimer = setTimeout(() => { this.submit.disabled = false; }, seconds * 1000);
  }
}

function describeFailure(error) {
  if (!(error instanceof ApiError)) return 'Something went wrong. Try again.';
  if (error.status === 401) return 'Wrong username or password.';
  return error.describe();
}
