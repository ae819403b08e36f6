// Team mode's account parts: who is signed in (GET /api/auth/me), the user menu, sign-out, and the
// password, API token and session dialogs. In local mode none of it shows.
import { Api, ApiError, Session, listIn } from '../transport/api.js';
import { SignInForm } from './signin.js';
import { UsersScreen } from './admin.js';
import { copyText } from '../shared/clipboard.js';
import { el, when, closesOnDataClose } from '../shared/dom.js';

const $ = (id) => document.getElementById(id);

function describe(error) {
  return error instanceof ApiError ? error.describe() : 'Something went wrong.';
}

/** Asks the server who is calling; sets up sign-in (every 401 shows it) and, in team mode, the menu.
 *  Resolves to the caller (`GET /api/auth/me`), or null when nobody is signed in. */
export async function startAccount({ app, announce }) {
  const signIn = new SignInForm({
    section: $('signin'), form: $('signin-form'), username: $('signin-username'),
    password: $('signin-password'), error: $('signin-error'), submit: $('signin-submit'), app,
  });
  Session.onUnauthenticated = () => signIn.show();
  let me;
  try {
    me = await Api.me();
  } catch {
    return null; // a 401 has shown the form; a network failure shows on the chat's own calls
  }
  if (me.mode !== 'team') return me;
  Session.team = true;
  new AccountMenu(me.user, announce);
  return me;
}

// MARK: - The user menu

class AccountMenu {
  constructor(user, announce) {
    this.root = $('account');
    this.button = $('account-button');
    this.menu = $('account-menu');
    this.announce = announce;
    $('account-name').textContent = user.display_name || user.username;
    this.root.hidden = false;
    const password = new PasswordDialog();
    const tokens = new TokensDialog();
    const sessions = new SessionsDialog();
    const users = user.role === 'admin' ? new UsersScreen(user) : null;
    $('open-users').hidden = !users;
    const actions = {
      'open-password': () => password.open(),
      'open-tokens': () => tokens.open(),
      'open-sessions': () => sessions.open(),
      'open-users': () => users && users.open(),
      'sign-out': () => this.signOut(),
    };
    this.button.addEventListener('click', () => this.toggle(this.menu.hidden));
    this.menu.addEventListener('click', (event) => {
      const item = event.target.closest('button');
      if (!item || !actions[item.id]) return;
      this.toggle(false);
      this.button.focus(); // where focus returns when the dialog closes (the item is hidden by then)
      actions[item.id]();
    });
    this.root.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || this.menu.hidden) return;
      event.preventDefault(); // the page's own Escape (stop an answer) must not run too
      this.toggle(false);
      this.button.focus();
    });
    document.addEventListener('click', (event) => {
      if (!this.menu.hidden && !this.root.contains(event.target)) this.toggle(false);
    });
  }

  toggle(open) {
    this.menu.hidden = !open;
    this.button.setAttribute('aria-expanded', String(open));
    if (open) this.menu.querySelector('button:not([hidden])').focus();
  }

  /** Ends the session on the server, then reloads at the start page: the page starts again at the
   *  sign-in form, and whoever signs in next does not land in this person's conversation. */
  async signOut() {
    try {
      await Api.signOut();
      history.replaceState(null, '', '/');
      location.reload();
    } catch (error) {
      this.announce(`Could not sign out: ${describe(error)}`);
    }
  }
}

// MARK: - Password

class PasswordDialog {
  constructor() {
    this.dialog = $('password-dialog');
    this.form = $('password-form');
    this.current = $('password-current');
    this.fresh = $('password-new');
    this.repeat = $('password-repeat');
    this.status = $('password-status');
    closesOnDataClose(this.dialog);
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.change();
    });
  }

  open() {
    this.form.reset();
    this.status.textContent = '';
    this.dialog.showModal();
    this.current.focus();
  }

  async change() {
    if (this.fresh.value !== this.repeat.value) {
      this.status.textContent = 'The two new passwords differ.';
      this.repeat.focus();
      return;
    }
    try {
      await Api.changePassword(this.current.value, this.fresh.value);
      this.form.reset();
      this.status.textContent = 'Password changed. Your other sessions were signed out.';
    } catch (error) {
      this.status.textContent = error instanceof ApiError && error.code === 'wrong_password'
        ? 'Not changed: the current password is wrong.' : `Not changed: ${describe(error)}`;
    }
  }
}

// MARK: - API tokens

class TokensDialog {
  constructor() {
    this.dialog = $('tokens-dialog');
    this.name = $('token-name');
    this.secret = $('token-secret');
    this.secretValue = $('token-secret-value');
    this.copy = $('token-copy');
    this.status = $('tokens-status');
    this.list = $('token-list');
    closesOnDataClose(this.dialog);
    $('token-form').addEventListener('submit', (event) => {
      event.preventDefault();
      this.create();
    });
    this.copy.addEventListener('click', async () => {
      const copied = await copyText(this.secretValue.value);
      this.status.textContent = copied ? 'Token copied.' : 'Copy failed: select the token and copy it.';
    });
    this.list.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-revoke]');
      if (button) this.revoke(button.dataset.revoke, button.dataset.name);
    });
    // Shown once: the secret leaves the page with the dialog.
    this.dialog.addEventListener('close', () => this.showSecret(null));
  }

  async open() {
    this.showSecret(null);
    this.status.textContent = '';
    this.dialog.showModal();
    this.name.focus();
    await this.load();
  }

  showSecret(token) {
    this.secretValue.value = token || '';
    this.secret.hidden = !token;
  }

  async load() {
    try {
      const tokens = listIn(await Api.tokens(), 'tokens');
      this.list.replaceChildren(...(tokens.length ? tokens.map(tokenRow) : [emptyRow(4, 'No tokens yet.')]));
    } catch (error) {
      this.status.textContent = `Could not load the tokens: ${describe(error)}`;
    }
  }

  async create() {
    const name = this.name.value.trim();
    if (!name) return;
    try {
      const created = await Api.createToken(name);
      this.name.value = '';
      this.showSecret(created.token);
      this.secretValue.select();
      this.status.textContent = `Token “${name}” created.`;
      await this.load();
    } catch (error) {
      this.status.textContent = `Not created: ${describe(error)}`;
    }
  }

  async revoke(id, name) {
    try {
      await Api.revokeToken(id);
      this.status.textContent = `Token “${name}” revoked.`;
      this.name.focus();
      await this.load();
    } catch (error) {
      this.status.textContent = `Not revoked: ${describe(error)}`;
    }
  }
}

function tokenRow(token) {
  return el('tr', { 'data-id': token.id },
    el('td', {}, token.name),
    el('td', {}, when(token.created_at)),
    el('td', {}, token.last_used_at ? when(token.last_used_at) : 'Never'),
    el('td', {}, el('button', {
      type: 'button', className: 'button small danger', textContent: 'Revoke',
      'aria-label': `Revoke token ${token.name}`, 'data-revoke': token.id, 'data-name': token.name,
    })));
}

function emptyRow(columns, text) {
  return el('tr', {}, el('td', { colSpan: columns, className: 'empty-row' }, text));
}

// MARK: - Sessions

class SessionsDialog {
  constructor() {
    this.dialog = $('sessions-dialog');
    this.status = $('sessions-status');
    this.list = $('session-list');
    closesOnDataClose(this.dialog);
    this.list.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-revoke]');
      if (button) this.revoke(button.dataset.revoke);
    });
  }

  async open() {
    this.status.textContent = '';
    this.dialog.showModal();
    await this.load();
  }

  async load() {
    try {
      const sessions = listIn(await Api.sessions(), 'sessions');
      this.list.replaceChildren(...sessions.map(sessionRow));
      const first = this.list.querySelector('button');
      if (first) first.focus();
    } catch (error) {
      this.status.textContent = `Could not load the sessions: ${describe(error)}`;
    }
  }

  async revoke(id) {
    try {
      await Api.revokeSession(id);
      this.status.textContent = 'Session revoked: that browser is signed out.';
      await this.load();
    } catch (error) {
      this.status.textContent = `Not revoked: ${describe(error)}`;
    }
  }
}

/** A browser's name from its User-Agent, roughly; the whole string is the cell's tooltip. */
function browserName(agent) {
  if (!agent) return 'Unknown browser';
  const known = agent.match(/(Firefox|Edg|OPR|Chrome|Chromium|Safari|curl|python-urllib)[/ ]?[\d.]*/i);
  return known ? known[0] : agent.slice(0, 40);
}

function sessionRow(session) {
  const browser = el('td', { title: session.user_agent || '' }, browserName(session.user_agent));
  if (session.current) browser.append(' ', el('span', { className: 'badge' }, 'This session'));
  const action = session.current
    ? el('td', { className: 'muted' }, 'Use Sign out')
    : el('td', {}, el('button', {
      type: 'button', className: 'button small danger', textContent: 'Revoke',
      'aria-label': `Revoke session of ${browserName(session.user_agent)} signed in ${when(session.created_at)}`,
      'data-revoke': session.id,
    }));
  return el('tr', { 'data-id': session.id, className: session.current ? 'is-current' : '' },
    browser, el('td', {}, when(session.created_at)), el('td', {}, when(session.last_used_at)), action);
}
