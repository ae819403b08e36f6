// The top bar: the conversation's title, the model menu and the open conversation's "⋯" menu
// (conversation-menu.js builds its items), and the Rename and Delete dialogs, which the list items'
// menus use too (the settings dialog is settings.js). It builds and shows; the controller decides
// (`page` gives the open conversation and takes the person's choices).
import { MenuButton } from '../shared/menu.js';
import { fillConversationMenu } from '../sidebar/conversation-menu.js';

/** A model's label without its parenthesised note ("Demo model (built-in, no LLM)" → "Demo model"):
 *  the picker shows it whole, the full label is its tooltip. */
export function shortLabel(label) {
  const short = label.replace(/\s*\([^)]*\)\s*$/, '').trim();
  return short || label;
}

export class TopBar {
  /**
   * `page.summary()` is the open conversation ({id, title, pinned, archived}) or null; `onModel(id)`
   * takes a choice of model, `onAction(action, conversation)` a choice in the "⋯" menu, `onRename(id,
   * title)` and `onDelete(id)` the dialogs' answers; `onShown(id)`, if given, hears of every model the
   * picker comes to show (chosen, selected for a conversation, or the list read).
   */
  constructor(ui, page) {
    this.ui = ui;
    this.page = page;
    this.deleting = null;
    ui.model.addEventListener('change', () => {
      const model = ui.model.value;
      this.showModel();
      try {
        localStorage.setItem('parley.model', model);
      } catch {
        // storage may be disabled; the choice still applies to this conversation
      }
      page.onModel(model);
    });

    this.menu = new MenuButton(ui.menuButton, ui.menu, {
      fill: (menu) => fillConversationMenu(menu, page.summary() || { id: '' }, { ids: true }),
      onChoose: (item) => {
        const conversation = page.summary();
        if (conversation) page.onAction(item.dataset.action, conversation);
      },
    });

    ui.renameCancel.addEventListener('click', () => ui.renameDialog.close('cancel'));
    ui.renameForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const title = ui.renameInput.value.trim();
      ui.renameDialog.close('save');
      if (title && this.renaming) page.onRename(this.renaming, title);
    });
    ui.deleteDialog.addEventListener('close', () => {
      if (ui.deleteDialog.returnValue === 'delete' && this.deleting) page.onDelete(this.deleting);
      this.deleting = null;
    });
  }

  // MARK: - Rename and Delete (any conversation)

  askRename(conversation) {
    this.renaming = conversation.id;
    this.ui.renameInput.value = conversation.title || '';
    this.ui.renameDialog.showModal();
    this.ui.renameInput.select();
  }

  askDelete(conversation) {
    this.deleting = conversation.id;
    this.ui.deleteTitle.textContent = conversation.title || 'Untitled';
    this.ui.deleteDialog.returnValue = '';
    this.ui.deleteDialog.showModal();
  }

  // MARK: - Title

  /** The heading only (the tab's title stays). */
  setHeading(title) {
    this.ui.title.textContent = title;
    this.ui.title.title = title;
  }

  /** The heading and the tab's title of an open conversation. */
  showTitle(title) {
    this.setHeading(title || 'Untitled');
    document.title = `${title || 'Untitled'} · Parley`;
  }

  /** An open conversation (`id`) has the "⋯" menu; a fresh page has none. */
  showActions(shown, id = null) {
    this.menu.close();
    this.ui.menuButton.hidden = !shown || !id;
  }

  showFresh() {
    this.setHeading('New conversation');
    this.showActions(false);
  }

  // MARK: - Models

  get model() {
    return this.ui.model.value;
  }

  /** The label of model `id` as offered, or the id. */
  labelOf(id) {
    const option = Array.from(this.ui.model.options).find((item) => item.value === id);
    return option ? option.textContent : id;
  }

  fillModels(models) {
    const fragment = document.createDocumentFragment();
    for (const model of models || []) {
      const option = document.createElement('option');
      option.value = model.id;
      const label = model.label || model.id;
      option.textContent = shortLabel(label);
      option.title = label;
      if (typeof model.vision === 'boolean') option.dataset.vision = String(model.vision);
      fragment.append(option);
    }
    this.ui.model.replaceChildren(fragment);
    this.showModel();
  }

  /** The tooltip of the picker (the full label of the model chosen), and `onShown`. */
  showModel() {
    const option = this.ui.model.selectedOptions[0];
    this.ui.model.title = option ? option.title || option.textContent : '';
    if (this.page.onShown) this.page.onShown(this.model);
  }

  /** Whether model `id` (default: the one shown) takes images: true, false, or null when the server
   *  does not say (`vision` in /api/models). */
  seesImages(id = this.model) {
    const option = Array.from(this.ui.model.options).find((item) => item.value === id);
    if (!option || !option.dataset.vision) return null;
    return option.dataset.vision === 'true';
  }

  /** `preferred` (the person's default model) if offered, else the model last chosen in this browser
   *  if still offered, else the first one. */
  preferredModel(preferred = null) {
    let saved = null;
    try {
      saved = localStorage.getItem('parley.model');
    } catch {
      saved = null;
    }
    const options = Array.from(this.ui.model.options, (option) => option.value);
    if (preferred && options.includes(preferred)) return preferred;
    if (saved && options.includes(saved)) return saved;
    return options[0] || null;
  }

  /** Selects `id`, listing it as unavailable when the server no longer offers it. */
  selectModel(id) {
    if (!id) return;
    if (!Array.from(this.ui.model.options).some((option) => option.value === id)) {
      const option = document.createElement('option');
      option.value = id;
      option.textContent = `${id} (unavailable)`;
      this.ui.model.append(option);
    }
    this.ui.model.value = id;
    this.showModel();
  }
}
