// The admin's Users screen: list, add, disable or enable, reset a password, change a role, and how
// much each account uses. It shows accounts only: no admin can see anyone's conversations here.
import { Api, ApiError, listIn } from '../transport/api.js';
import { el, when, closesOnDataClose } from '../shared/dom.js';

const $ = (id) => document.getElementById(id);

function describe(error) {
  return error instanceof ApiError ? error.describe() : 'Something went wrong.';
}

export class UsersScreen {
  /** `me`: the signed-in admin, who cannot disable or demote themself here. */
  constructor(me) {
    this.me = me;
    this.dialog = $('users-dialog');
    this.form = $('user-form');
    this.status = $('users-status');
    this.list = $('user-list');
    this.reset = new ResetPasswordDialog((text) => { this.status.textContent = text; });
    closesOnDataClose(this.dialog);
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.add();
    });
    this.list.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-action]');
      const row = button && button.closest('tr');
      if (!row) return;
      const user = this.users.get(row.dataset.id);
      if (button.dataset.action === 'toggle') this.update(user, { disabled: !user.disabled });
      if (button.dataset.action === 'reset') this.reset.open(user);
    });
    this.list.addEventListener('change', (event) => {
      const select = event.target.closest('select[data-action="role"]');
      if (select) this.update(this.users.get(select.closest('tr').dataset.id), { role: select.value });
    });
    this.users = new Map();
  }

  async open() {
    this.status.textContent = '';
    this.dialog.showModal();
    $('user-username').focus();
    await this.load();
  }

  async load() {
    try {
      const users = listIn(await Api.users(), 'users');
      this.users = new Map(users.map((user) => [user.id, user]));
      this.list.replaceChildren(...users.map((user) => userRow(user, user.id === this.me.id)));
      await Promise.all(users.map((user) => this.loadUsage(user.id)));
    } catch (error) {
      this.status.textContent = `Could not load the users: ${describe(error)}`;
    }
  }

  async loadUsage(id) {
    const cell = this.list.querySelector(`tr[data-id="${CSS.escape(id)}"] .usage`);
    try {
      const usage = await Api.usage(id);
      if (cell) cell.textContent = usageText(usage);
    } catch {
      if (cell) cell.textContent = 'Unavailable';
    }
  }

  async add() {
    const fields = {
      username: $('user-username').value.trim(),
      password: $('user-password').value,
      role: $('user-role').value,
    };
    const displayName = $('user-display-name').value.trim();
    if (displayName) fields.display_name = displayName;
    try {
      await Api.createUser(fields);
      this.form.reset();
      this.status.textContent = `User ${fields.username} added.`;
      $('user-username').focus();
      await this.load();
    } catch (error) {
      this.status.textContent = `Not added: ${describe(error)}`;
    }
  }

  async update(user, fields) {
    if (!user) return;
    try {
      await Api.updateUser(user.id, fields);
      const what = 'role' in fields ? `now ${fields.role === 'admin' ? 'an admin' : 'a member'}`
        : (fields.disabled ? 'disabled' : 'enabled');
      this.status.textContent = `${user.username} is ${what}.`;
    } catch (error) {
      this.status.textContent = `${user.username} not changed: ${describe(error)}`;
    }
    await this.load();
  }
}

// MARK: - View

/** Each count's name, singular and plural ("1 conversation", "2 conversations"), chosen by the plural
 *  rules of the page's language; a count the page does not know is named by its key. */
const USAGE_NAMES = {
  conversations: ['conversation', 'conversations'], messages: ['message', 'messages'],
  assistant_replies: ['reply', 'replies'], output_tokens: ['output token', 'output tokens'],
};
const pluralRules = new Intl.PluralRules(document.documentElement.lang || 'en');

function counted(value, key) {
  const [one, other] = USAGE_NAMES[key] || [key.replace(/_/g, ' '), key.replace(/_/g, ' ')];
  return `${value} ${pluralRules.select(value) === 'one' ? one : other}`;
}
const USAGE_ORDER = ['conversations', 'messages', 'assistant_replies', 'output_tokens'];
const usageRank = (key) => (USAGE_ORDER.includes(key) ? USAGE_ORDER.indexOf(key) : USAGE_ORDER.length);

/** "3 conversations, 12 messages, 5 replies, 900 output tokens; last active …": the counts of the
 *  usage answer (any it has, named by their keys) and its last activity. */
function usageText(usage) {
  const parts = Object.entries(usage || {})
    .filter(([, value]) => typeof value === 'number')
    .sort(([a], [b]) => usageRank(a) - usageRank(b))
    .map(([key, value]) => counted(value, key));
  const counts = parts.length ? parts.join(', ') : 'None';
  return usage && usage.last_activity_at ? `${counts}; last active ${when(usage.last_activity_at)}` : counts;
}

function userRow(user, isMe) {
  const name = user.display_name && user.display_name !== user.username ? user.display_name : '';
  const role = el('select', { 'data-action': 'role', 'aria-label': `Role of ${user.username}`, disabled: isMe },
    el('option', { value: 'member', selected: user.role === 'member' }, 'Member'),
    el('option', { value: 'admin', selected: user.role === 'admin' }, 'Admin'));
  const toggle = el('button', {
    type: 'button', className: `button small${user.disabled ? '' : ' danger'}`, disabled: isMe,
    textContent: user.disabled ? 'Enable' : 'Disable', 'data-action': 'toggle',
    'aria-label': `${user.disabled ? 'Enable' : 'Disable'} ${user.username}`,
  });
  const reset = el('button', {
    type: 'button', className: 'button small', textContent: 'Reset password', 'data-action': 'reset',
    'aria-label': `Reset password of ${user.username}`,
  });
  return el('tr', { 'data-id': user.id, className: user.disabled ? 'is-disabled' : '' },
    el('td', {}, el('span', { className: 'username' }, user.username), name ? el('span', { className: 'muted' }, ` ${name}`) : null,
      isMe ? el('span', { className: 'badge' }, 'You') : null),
    el('td', {}, role),
    el('td', { title: `Added ${when(user.created_at)}` }, user.disabled ? 'Disabled' : 'Active'),
    el('td', { className: 'usage' }, 'Loading…'),
    el('td', {}, el('div', { className: 'row-actions' }, toggle, reset)));
}

// MARK: - Reset a password

class ResetPasswordDialog {
  constructor(report) {
    this.report = report;
    this.dialog = $('reset-dialog');
    this.form = $('reset-form');
    this.password = $('reset-password');
    this.status = $('reset-status');
    this.user = null;
    closesOnDataClose(this.dialog);
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.save();
    });
  }

  open(user) {
    this.user = user;
    this.form.reset();
    this.status.textContent = '';
    $('reset-username').textContent = user.username;
    this.dialog.showModal();
    this.password.focus();
  }

  async save() {
    try {
      await Api.updateUser(this.user.id, { password: this.password.value });
      this.dialog.close();
      this.report(`The password of ${this.user.username} is reset.`);
    } catch (error) {
      this.status.textContent = `Not reset: ${describe(error)}`;
    }
  }
}
