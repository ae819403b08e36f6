// A sent image shown larger (issue 21), a view: a modal <dialog> with the image itself (GET
// /api/files/{id}), its name, Download and Close. Escape closes it (the dialog's own), so does a click
// on the backdrop; the focus goes back to the thumbnail that opened it.

export class ImageViewer {
  /** `ui`: `dialog`, `title`, `image`, `download` (a link) and `close` (a button). */
  constructor(ui) {
    this.ui = ui;
    this.opener = null;
    ui.close.addEventListener('click', () => ui.dialog.close());
    // A click on the backdrop lands on the dialog itself, outside its box.
    ui.dialog.addEventListener('click', (event) => {
      if (event.target !== ui.dialog) return;
      const box = ui.dialog.getBoundingClientRect();
      const inside = event.clientX >= box.left && event.clientX <= box.right
        && event.clientY >= box.top && event.clientY <= box.bottom;
      if (!inside) ui.dialog.close();
    });
    ui.dialog.addEventListener('close', () => {
      ui.image.removeAttribute('src');
      const opener = this.opener;
      this.opener = null;
      if (opener && opener.isConnected) opener.focus();
    });
  }

  /** Opens image `url` named `filename`, downloadable at `downloadURL`; `opener` gets the focus back. */
  open({ url, filename, downloadURL, opener = null }) {
    const { dialog, title, image, download } = this.ui;
    this.opener = opener;
    title.textContent = filename;
    image.alt = filename;
    image.src = url;
    download.href = downloadURL;
    download.download = filename;
    download.setAttribute('aria-label', `Download ${filename}`);
    if (!dialog.open) dialog.showModal();
    this.ui.close.focus();
  }
}
