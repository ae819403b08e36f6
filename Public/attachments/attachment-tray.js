// The composer's attachments (issue 21), a view: the Attach files button and its hidden file input, an
// image pasted into the message box, files dropped on the composer, and one chip per file above the box
// (its preview or icon, name, progress, error with what to do, vision warning, Remove). It builds DOM
// and raises intents (`onFiles`, `onRemove`, `onRetry`); uploads are the controller's (attaching.js).
// Filenames come from people: they only ever go in as text.
import { el } from '../shared/dom.js';
import { extensionOf, sizeText } from './upload-advice.js';

/** Files in a DataTransfer (a paste or a drop), or none. */
function filesIn(transfer) {
  if (!transfer) return [];
  if (transfer.files && transfer.files.length) return [...transfer.files];
  return [...(transfer.items || [])].filter((item) => item.kind === 'file').map((item) => item.getAsFile()).filter(Boolean);
}

function carriesFiles(event) {
  return Boolean(event.dataTransfer) && [...event.dataTransfer.types].includes('Files');
}

export class AttachmentTray {
  /** `ui`: `tray` (the chips' list), `button`, `input` (type=file), `dropZone` (the composer) and
   *  `pasteTarget` (the message box). */
  constructor(ui, { onFiles, onRemove, onRetry }) {
    this.ui = ui;
    ui.button.addEventListener('click', () => ui.input.click());
    ui.input.addEventListener('change', () => {
      const files = [...ui.input.files];
      ui.input.value = '';
      if (files.length) onFiles(files);
    });
    ui.pasteTarget.addEventListener('paste', (event) => {
      const files = filesIn(event.clipboardData);
      if (!files.length) return;
      // A copied file, or a screenshot: attached, and its name (or nothing) is not pasted as text.
      event.preventDefault();
      onFiles(files);
    });
    let depth = 0;
    const dropping = (on) => ui.dropZone.classList.toggle('is-drop-target', on);
    ui.dropZone.addEventListener('dragenter', (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      depth += 1;
      dropping(true);
    });
    ui.dropZone.addEventListener('dragover', (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = 'copy';
    });
    ui.dropZone.addEventListener('dragleave', () => {
      depth = Math.max(depth - 1, 0);
      if (depth === 0) dropping(false);
    });
    ui.dropZone.addEventListener('drop', (event) => {
      depth = 0;
      dropping(false);
      const files = filesIn(event.dataTransfer);
      if (!files.length) return;
      event.preventDefault();
      onFiles(files);
    });
    // A file dropped beside the composer would make the browser leave the page to show it: refused.
    for (const kind of ['dragover', 'drop']) {
      window.addEventListener(kind, (event) => {
        if (!carriesFiles(event) || ui.dropZone.contains(event.target)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = 'none';
      });
    }
    ui.tray.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-action]');
      const chip = button && button.closest('.attachment-chip');
      if (!chip) return;
      if (button.dataset.action === 'remove-attachment') onRemove(chip.dataset.key);
      else if (button.dataset.action === 'retry-attachment') {
        // Try again hides itself while the file uploads: the focus stays on the chip, at its Remove.
        chip.querySelector('.attachment-remove').focus();
        onRetry(chip.dataset.key);
      }
    });
  }

  chipFor(key) {
    return this.ui.tray.querySelector(`.attachment-chip[data-key="${CSS.escape(key)}"]`);
  }

  /** Shows `item` (pending-attachments.js) as it is now, making its chip the first time. `preview`: a
   *  blob URL of the image, or null; `warning`: a sentence shown at the chip, or ''. */
  show(item, { preview = null, warning = '', error = null } = {}) {
    let chip = this.chipFor(item.key);
    if (!chip) {
      chip = this.build(item, preview);
      this.ui.tray.append(chip);
      this.ui.tray.hidden = false;
    }
    chip.dataset.state = item.state;
    const percent = Math.round(item.progress * 100);
    const progress = chip.querySelector('.attachment-progress');
    progress.hidden = item.state !== 'uploading';
    progress.value = percent;
    progress.setAttribute('aria-valuenow', String(percent));
    const state = chip.querySelector('.attachment-state');
    state.textContent = stateText(item, percent);
    const failure = chip.querySelector('.attachment-error');
    failure.hidden = item.state !== 'failed';
    failure.querySelector('.attachment-error-text').textContent = error ? error.text : '';
    failure.querySelector('[data-action="retry-attachment"]').hidden = !(error && error.retry);
    const note = chip.querySelector('.attachment-warning');
    note.textContent = warning;
    note.hidden = warning === '';
    chip.classList.toggle('has-warning', warning !== '');
    if (item.state === 'done' && item.isImage) chip.classList.add('is-image');
  }

  build(item, preview) {
    const name = item.name;
    const visual = preview
      ? el('img', { className: 'attachment-preview', src: preview, alt: '' })
      : el('span', { className: 'file-badge attachment-icon', 'aria-hidden': 'true' }, extensionOf(name));
    const progress = el('progress', { className: 'attachment-progress', max: 100, value: 0,
      'aria-label': `Uploading ${name}`, 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '0' });
    return el('li', { className: `attachment-chip${item.isImage ? ' is-image' : ''}`, 'data-key': item.key },
      el('div', { className: 'attachment-main' },
        visual,
        el('span', { className: 'attachment-text' },
          el('span', { className: 'attachment-name', title: name }, name),
          el('span', { className: 'attachment-state' })),
        el('button', { className: 'button small icon-button attachment-remove', type: 'button',
          'data-action': 'remove-attachment', 'aria-label': `Remove ${name}`, title: `Remove ${name}` }, '\u00d7')),
      progress,
      el('p', { className: 'attachment-error', hidden: true },
        el('span', { className: 'attachment-error-text' }), ' ',
        el('button', { className: 'button small', type: 'button', 'data-action': 'retry-attachment',
          'aria-label': `Try ${name} again` }, 'Try again')),
      el('p', { className: 'attachment-warning', hidden: true }));
  }

  /** Removes `key`'s chip. `moveFocus`: the focus goes to the next chip's Remove (or the previous
   *  one's, or `fallback`) instead of being lost with the chip. */
  remove(key, { moveFocus = false, fallback = null } = {}) {
    const chip = this.chipFor(key);
    if (!chip) return;
    const neighbour = chip.nextElementSibling || chip.previousElementSibling;
    chip.remove();
    this.ui.tray.hidden = this.ui.tray.children.length === 0;
    if (!moveFocus) return;
    const target = neighbour ? neighbour.querySelector('.attachment-remove') : fallback;
    if (target) target.focus();
  }

  clear() {
    this.ui.tray.replaceChildren();
    this.ui.tray.hidden = true;
  }
}

function stateText(item, percent) {
  const size = sizeText(item.record ? item.record.bytes : item.size);
  switch (item.state) {
    case 'uploading': return `Uploading… ${percent}%`;
    case 'done': return `Ready, ${size}`;
    case 'failed': return 'Not attached';
    default: return '';
  }
}
