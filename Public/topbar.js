// The top bar: the conversation's title, the model menu, the system prompt form, and the Rename and
// Delete dialogs. It builds and shows; the controller decides (`page` gives the open conversation
// and takes the person's choices).

export class TopBar {
  /**
   * `page.conversation()` is the open conversation or null, `page.systemPrompt()` the prompt to edit;
   * `onModel(id)`, `onSystemPrompt(text)`, `onRename(title)` and `onDelete()` act on the person's choice.
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

    ui.systemToggle.addEventListener('click', () => {
      const open = ui.systemForm.hidden;
      ui.systemForm.hidden = !open;
      ui.systemToggle.setAttribute('aria-expanded', String(open));
      if (open) {
        ui.systemPrompt.value = page.systemPrompt();
        ui.systemStatus.textContent = '';
        ui.systemPrompt.focus();
      }
    });
    ui.systemCancel.addEventListener('click', () => {
      this.closeSystemForm();
      ui.systemToggle.focus();
    });
    ui.systemForm.addEventListener('submit', (event) => {
      event.preventDefault();
      page.onSystemPrompt(ui.systemPrompt.value.trim());
    });

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

  /** An open conversation can be renamed and deleted; a fresh page cannot. */
  showActions(shown) {
    this.ui.rename.hidden = !shown;
    this.ui.remove.hidden = !shown;
  }

  showFresh() {
    this.ui.title.textContent = 'New conversation';
    this.showActions(false);
    this.closeSystemForm();
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

  // MARK: - System prompt

  closeSystemForm() {
    this.ui.systemForm.hidden = true;
    this.ui.systemToggle.setAttribute('aria-expanded', 'false');
  }

  /** Shows the open conversation's prompt if the form is open. */
  showSystemPrompt(text) {
    if (!this.ui.systemForm.hidden) this.ui.systemPrompt.value = text;
  }

  setSystemStatus(text) {
    this.ui.systemStatus.textContent = text;
  }
}
