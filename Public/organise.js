// Pin and archive, from a conversation's "⋯" menu (the top bar's for the open conversation, or a list
// item's for any), through PATCH /api/conversations/{id}. The menu's labels say what a press does
// ("Pin"/"Unpin", "Archive"/"Unarchive"): `show` keeps the open conversation's flags for the top bar's
// menu. An archived conversation stays open; only the list leaves it out.
import { Api, ApiError } from './api.js';

export class Organiser {
  /** `model`: the conversation model (its open conversation gets the answer), `conversations`: the
   *  list (the conversation moves to its group), `announce(text)` tells the person. */
  constructor({ model, conversations, announce }) {
    Object.assign(this, { model, conversations, announce });
    this.conversation = null; // {id, pinned, archived} of the open conversation
  }

  /** The open conversation (or null on a fresh page), or a change told by another tab. */
  show(conversation) {
    this.conversation = conversation
      ? { id: conversation.id, pinned: conversation.pinned === true, archived: conversation.archived === true }
      : null;
  }

  /** Flips `field` (`pinned` or `archived`) of `conversation` ({id, pinned, archived}). */
  async toggle(conversation, field) {
    if (!conversation) return;
    const value = !conversation[field];
    try {
      const updated = await Api.updateConversation(conversation.id, { [field]: value });
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
