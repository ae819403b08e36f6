// The person's changes to a conversation's fields, a part of the controller (app.js): its model, the
// settings dialog's values, and the items of a conversation's "⋯" menu (the top bar's for the open one,
// or a list item's for any): pin, archive, rename, delete. Each goes through PATCH or DELETE
// /api/conversations/{id}; the answer goes to the model (when it is the open conversation), then to
// the views. An archived conversation stays open; only the list leaves it out.
import { Api } from '../transport/api.js';

/** `page` gives the model, the views (`topbar`, `conversations`, `emptyState`), `announce(text)` and
 *  `describe(error)`. Returns the handlers the views raise their intents to. */
export function conversationEdits(page) {
  const { model, topbar, conversations, emptyState, announce, describe } = page;

  /** The model picker: a fresh page only shows it (the first send uses it); an open one saves it. */
  async function changeModel(id) {
    emptyState.showModel(topbar.labelOf(id));
    if (!model.conversation) return;
    try {
      model.updated(await Api.updateConversation(model.conversation.id, { model: id }));
      announce(`Model set to ${id}.`);
    } catch (error) {
      announce(`Could not change the model: ${describe(error)}`);
    }
  }

  /** `conversation`: {id, title, pinned, archived}, the open one or any listed. Export items are links. */
  function act(action, conversation) {
    switch (action) {
      case 'pin': toggle(conversation, 'pinned'); break;
      case 'archive': toggle(conversation, 'archived'); break;
      case 'rename': topbar.askRename(conversation); break;
      case 'delete': topbar.askDelete(conversation); break;
      default: break;
    }
  }

  /** Flips `field` (`pinned` or `archived`) of `conversation` ({id, pinned, archived}). */
  async function toggle(conversation, field) {
    if (!conversation) return;
    const value = !conversation[field];
    try {
      const updated = await Api.updateConversation(conversation.id, { [field]: value });
      model.applyFlags(updated);
      conversations.update(updated);
      announce(toggledText(field, value));
    } catch (error) {
      announce(`Could not ${verbFor(field, value)} the conversation: ${describe(error)}`);
    }
  }

  async function rename(id, title) {
    try {
      const renamed = await Api.updateConversation(id, { title });
      if (model.updated(renamed)) topbar.showTitle(renamed.title);
      conversations.rename(id, renamed.title);
      announce('Conversation renamed.');
    } catch (error) {
      announce(`Could not rename: ${describe(error)}`);
    }
  }

  async function remove(id) {
    try {
      await Api.deleteConversation(id);
      conversations.deleted(id);
      announce('Conversation deleted.');
      if (model.openId === id) location.hash = '#/';
    } catch (error) {
      announce(`Could not delete: ${describe(error)}`);
    }
  }

  /** The settings dialog's Save: kept for the first send on a fresh page, else saved (see SettingsForm). */
  async function saveSettings(fields) {
    const conversation = model.conversation;
    if (!conversation) {
      model.setPendingSettings(fields);
      return 'pending';
    }
    const saved = await Api.updateConversation(conversation.id, fields);
    return model.updated(saved) ? 'saved' : null;
  }

  /** The settings dialog reads the open conversation again (totals, another tab's changes). */
  async function readSettings() {
    const id = model.openId;
    if (!id) return null;
    let fresh;
    try {
      fresh = await Api.conversation(id);
    } catch {
      return null; // what is shown stays; the next change or opening reads again
    }
    return model.applySettings(fresh) ? fresh : null;
  }

  return { changeModel, act, rename, remove, saveSettings, readSettings };
}

function verbFor(field, value) {
  if (field === 'pinned') return value ? 'pin' : 'unpin';
  return value ? 'archive' : 'unarchive';
}

function toggledText(field, value) {
  if (field === 'pinned') return value ? 'Conversation pinned: it is listed first.' : 'Conversation unpinned.';
  return value
    ? 'Conversation archived: it is hidden from the list (Show archived lists it).'
    : 'Conversation unarchived: it is back in the list.';
}
