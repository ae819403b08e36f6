// Export all and Import, at the bottom of the sidebar (reachable with no conversation open). Export
// all is a plain download link (the session cookie goes with it). Import reads the chosen file in
// the browser, checks that it is JSON at all, and posts its exact text to /api/import; the server
// checks the rest and its message (naming the place and the fault) is shown as it says it. The
// server's body limit (PARLEY_MAX_BODY_BYTES) is not known here: its 413 says a file is too large.
// A view: the link's address and the import itself are the controller's (`exportAllURL`, `importDocument`).
import { ApiError } from '../transport/api.js';

export class Transfer {
  /** `ui`: exportAll (link), file (input type=file), status. `exportAllURL` is the link's address;
   *  `importDocument(text)` posts a file's exact text and resolves to the answer ({items}) or throws;
   *  `onImported(items)` takes the new conversations. */
  constructor(ui, { exportAllURL, importDocument, onImported }) {
    this.ui = ui;
    this.importDocument = importDocument;
    this.onImported = onImported;
    this.busy = false;
    ui.exportAll.href = exportAllURL;
    ui.file.addEventListener('change', () => {
      const file = ui.file.files && ui.file.files[0];
      ui.file.value = ''; // choosing the same file again is a new import
      if (file) this.importFile(file);
    });
  }

  setStatus(text, error = false) {
    this.ui.status.textContent = text;
    this.ui.status.classList.toggle('is-error', error);
  }

  async importFile(file) {
    if (this.busy) { // (the control is not disabled: that would take the focus away from it)
      this.setStatus(`${file.name} was not imported: an import is still running. Choose it again when it is done.`, true);
      return;
    }
    this.busy = true;
    this.setStatus(`Importing ${file.name}…`);
    try {
      const text = await file.text();
      try {
        JSON.parse(text);
      } catch {
        this.setStatus(`Not imported: this isn't a Parley export (${file.name} is not a JSON file).`, true);
        return;
      }
      const answer = await this.importDocument(text);
      const items = (answer && answer.items) || [];
      this.setStatus(`Imported ${items.length} conversation${items.length === 1 ? '' : 's'}.`);
      this.onImported(items);
    } catch (error) {
      this.setStatus(`Not imported: ${this.reason(error)}`, true);
    } finally {
      this.busy = false;
    }
  }

  reason(error) {
    if (!(error instanceof ApiError)) return 'the file could not be read.';
    if (error.status === 413) {
      return `the file is larger than this server accepts (${error.message}) Export and import the ` +
        'conversations one at a time, or ask the administrator to raise PARLEY_MAX_BODY_BYTES.';
    }
    if (error.status === 0) {
      return 'the server could not be reached, or it closed the connection (a file larger than it accepts).';
    }
    return error.describe();
  }
}
