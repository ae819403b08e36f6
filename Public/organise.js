// Pin and archive of the open conversation: two buttons in the top bar whose labels say what a
// press does ("Pin"/"Unpin", "Archive"/"Unarchive"), through PATCH /api/conversations/{id}. An
// archived conversation stays open; only the list leaves it out.
import { Api, ApiError } from './api.js';

export class OrganiseButtons {
  /** `model`: the conversation model (its open conversation gets the answer), `conversations`: the
   *  list (the conversation moves to its group), `announce(text)` tells the person. */
  constructor({ pin, archive }, { model, conversations, announce }) {
    Object.assign(this, { pin, archive, model, conversations, announce });
    this.conversation = null; // {id, pinned, archived} of the open conversation
    pin.addEventListener('click', () => this.toggle('pinned'));
    archive.addEventListener('click', () => this.toggle('archived'));
  }

  /** The open conversation (or null on a fresh page), or a change told by another tab. */
  show(conversation) {
    this.conversation = conversation
      ? { id: conversation.id, pinned: conversation.pinned === true, archived: conversation.archived === true }
      : null;
    const open = this.conversation !== null;
    this.pin.hidden = !open;
    this.archive.hidden = !open;
    if (!open) return;
    this.pin.textContent = this.conversation.pinned ? 'Unpin' : 'Pin';
    this.archive.textContent = this.conversation.archived ? 'Unarchive' : 'Archive';
  }

  async toggle(field) {
    const current = this.conversation;
    if (!current) return;
    const value = !current[field];
    const button = field === 'pinned' ? this.pin : this.archive;
    const sequence = this.model.loadSequence; // changes when another conversation starts loading
    button.disabled = true;
    try {
      const updated = await Api.updateConversation(current.id, { [field]: value });
      const open = this.model.conversation;
      if (open && open.id === updated.id) {
        Object.assign(open, { pinned: updated.pinned, archived: updated.archived });
        this.show(updated);
      }
      this.conversations.update(updated);
      this.announce(messageFor(field, value));
    } catch (error) {
      const reason = error instanceof ApiError ? error.describe() : 'Something went wrong.';
      this.announce(`Could not ${verbFor(field, value)} the conversation: ${reason}`);
    } finally {
      button.disabled = false;
      // The label changed under the focus (disabling may have dropped it to the body): keep it on the
      // button, unless the person has moved on meanwhile (focused elsewhere, opened another conversation).
      const stayed = document.activeElement === button || document.activeElement === document.body;
      if (stayed && this.model.loadSequence === sequence && this.model.openId === current.id) button.focus();
    }
  }
}

function verbFor(field, value) {
  if (field === 'pinned') return value ? 'pin' : 'unpin';
  return value ? 'archive' : 'unarchive';
}

function messageFor(field, value) {
  if (field === 'pinned') return value ? 'Conversation pinned: it is listed first.' : 'Conversation unpinned.';
  return value
    ? 'Conversation archived: it is hidden from the list (Show archived lists it).'
    : 'Conversation unarchived: it is back in the list.';
}
