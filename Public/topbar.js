// The top bar: the conversation's title, the model menu, the Export menu (download links), and the
// Rename and Delete dialogs (the settings form is settings.js). It builds and shows; the controller
// decides (`page` gives the open conversation and takes the person's choices).
import { Api } from './api.js';

export class TopBar {
  /**
   * `page.conversation()` is the open conversation or null; `onModel(id)`, `onRename(title)` and
   * `onDelete()` act on the person's choice.
   */
  constructor(ui, page) {
    this.ui = ui;
    ui.model.addEventListener('change', () => {
      const model = ui.model.value;
      try {
        localStorage.setItem('parley.model', model);
      } catch {
        // storage may be disabled; the choice still applies to this conversation
      }
      page.onModel(model);
    });

    this.exportMenu(ui);

    ui.rename.addEventListener('click', () => {
      const conversation = page.conversation();
      if (!conversation) return;
      ui.renameInput.value = conversation.title || '';
      ui.renameDialog.showModal();
      ui.renameInput.select();
    });
    ui.renameCancel.addEventListener('click', () => ui.renameDialog.close('cancel'));
    ui.renameForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const title = ui.renameInput.value.trim();
      ui.renameDialog.close('save');
      if (title) page.onRename(title);
    });

    ui.remove.addEventListener('click', () => {
      const conversation = page.conversation();
      if (!conversation) return;
      ui.deleteTitle.textContent = conversation.title || 'Untitled';
      ui.deleteDialog.returnValue = '';
      ui.deleteDialog.showModal();
    });
    ui.deleteDialog.addEventListener('close', () => {
      if (ui.deleteDialog.returnValue === 'delete') page.onDelete();
    });
  }

  // MARK: - Title

  /** The heading only (the tab's title stays). */
  setHeading(title) {
    this.ui.title.textContent = title;
  }

  /** The heading and the tab's title of an open conversation. */
  showTitle(title) {
    this.ui.title.textContent = title || 'Untitled';
    document.title = `${title || 'Untitled'} · Parley`;
  }

  /** An open conversation (`id`) can be exported, renamed and deleted; a fresh page cannot. */
  showActions(shown, id = null) {
    this.ui.rename.hidden = !shown;
    this.ui.remove.hidden = !shown;
    this.ui.exportToggle.hidden = !shown || !id;
    this.setExportMenu(false);
    if (shown && id) {
      this.ui.exportJSON.href = Api.exportURL(id, 'json');
      this.ui.exportMarkdown.href = Api.exportURL(id, 'md');
    }
  }

  showFresh() {
    this.ui.title.textContent = 'New conversation';
    this.showActions(false);
  }

  // MARK: - Export

  /** A disclosure menu of two download links (the server names the files); Escape or a click
   *  elsewhere closes it. */
  exportMenu(ui) {
    ui.exportToggle.addEventListener('click', () => {
      this.setExportMenu(ui.exportMenu.hidden);
      if (!ui.exportMenu.hidden) ui.exportJSON.focus();
    });
    ui.exportMenu.addEventListener('click', (event) => {
      if (event.target.closest('a')) this.setExportMenu(false);
    });
    ui.exportMenu.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape') return;
      event.preventDefault(); // the page's own Escape (stop an answer) must not run too
      this.setExportMenu(false);
      ui.exportToggle.focus();
    });
    document.addEventListener('click', (event) => {
      if (!ui.exportMenu.hidden && !event.target.closest('#export-menu, #export-toggle')) this.setExportMenu(false);
    });
  }

  setExportMenu(open) {
    this.ui.exportMenu.hidden = !open;
    this.ui.exportToggle.setAttribute('aria-expanded', String(open));
  }

  // MARK: - Models

  get model() {
    return this.ui.model.value;
  }

  fillModels(models) {
    const fragment = document.createDocumentFragment();
    for (const model of models || []) {
      const option = document.createElement('option');
      option.value = model.id;
      option.textContent = model.label || model.id;
      fragment.append(option);
    }
    this.ui.model.replaceChildren(fragment);
  }

  /** The model last chosen in this browser if still offered, else the first one. */
  preferredModel() {
    let saved = null;
    try {
      saved = localStorage.getItem('parley.model');
    } catch {
      saved = null;
    }
    const options = Array.from(this.ui.model.options, (option) => option.value);
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
  }
}
