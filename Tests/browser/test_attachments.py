"""Attachments on the page (issue 21), against a real Parley: a PNG chosen with the file input shows at
once as a chip with its local (blob:) preview, its upload's progress (throttled with CDP so it is seen)
and then Ready, with Send waiting meanwhile; Remove cancels an upload in flight (nothing stored) or
takes a finished chip away; an image pasted and one dropped on the composer are attached too; sent, the
question shows the thumbnail (?variant=thumb), which opens larger in a dialog that Escape closes, also
after a reload; a document is a chip that downloads the same bytes; a ZIP gets an error chip that says
what is accepted and is not sent; a model without vision says so at an image's chip; axe in both
colour schemes on the chips, the sent files and the open image. Every file is made here: PNGs of
random pixels written with zlib and struct, a ZIP with zipfile, a Markdown text."""
import base64
import io
import random
import struct
import zipfile
import zlib

import pytest

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from axe_check import assert_accessible
from conftest import last_assistant_id, messages, open_page, screenshot, start_parley, wait_idle, wait_until

# The file size limit of the `parley_small_files` server.
SMALL_FILE_LIMIT = 4096


@pytest.fixture(scope="module")
def parley_small_files(artifacts):
    """A server that takes files of at most SMALL_FILE_LIMIT bytes."""
    server = start_parley("small-files", {"PARLEY_MAX_FILE_BYTES": str(SMALL_FILE_LIMIT)})
    yield server
    server.stop()


def png_bytes(width, height, seed=1):
    """A valid RGB PNG of random pixels (so it hardly compresses: its size is about width*height*3)."""
    rng = random.Random(seed)
    rows = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def zip_bytes():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("inside.txt", "not for Parley\n")
    return buffer.getvalue()


# Every chip as the page shows it: state, name, status text, progress, preview, error and warning.
CHIPS_JS = """
return [...document.querySelectorAll('#attachment-tray .attachment-chip')].map((chip) => {
  const progress = chip.querySelector('.attachment-progress');
  const preview = chip.querySelector('.attachment-preview');
  const error = chip.querySelector('.attachment-error');
  const retry = chip.querySelector('[data-action="retry-attachment"]');
  const warning = chip.querySelector('.attachment-warning');
  return {state: chip.dataset.state, name: chip.querySelector('.attachment-name').textContent,
          status: chip.querySelector('.attachment-state').textContent,
          progress: progress.hidden ? null : Number(progress.getAttribute('aria-valuenow')),
          preview: preview ? {src: preview.src, width: preview.naturalWidth} : null,
          error: error.hidden ? null : error.querySelector('.attachment-error-text').textContent,
          retry: !error.hidden && !retry.hidden, warning: warning.hidden ? null : warning.textContent};
});
"""

# Records every state and progress value the chips go through (a MutationObserver), for a test that
# must see the progress between 0 and 100 without racing the upload.
RECORD_JS = """
window.__chipStates = [];
new MutationObserver(() => {
  for (const chip of document.querySelectorAll('#attachment-tray .attachment-chip')) {
    const progress = chip.querySelector('.attachment-progress');
    window.__chipStates.push([chip.dataset.state, Number(progress.getAttribute('aria-valuenow')),
                              document.getElementById('send').disabled]);
  }
}).observe(document.getElementById('attachment-tray'), {subtree: true, childList: true, attributes: true, characterData: true});
"""

# A File made in the page from base64 bytes, handed to the composer as a paste or as a drop.
FILE_EVENT_JS = """
const [how, name, type, data] = arguments;
const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
const transfer = new DataTransfer();
transfer.items.add(new File([bytes], name, {type}));
if (how === 'paste') {
  const event = new ClipboardEvent('paste', {clipboardData: transfer, bubbles: true, cancelable: true});
  document.getElementById('input').dispatchEvent(event);
  return event.defaultPrevented;
}
const zone = document.getElementById('composer');
for (const kind of ['dragenter', 'dragover']) zone.dispatchEvent(new DragEvent(kind, {dataTransfer: transfer, bubbles: true, cancelable: true}));
const dropping = zone.classList.contains('is-drop-target');
const event = new DragEvent('drop', {dataTransfer: transfer, bubbles: true, cancelable: true});
zone.dispatchEvent(event);
return dropping && event.defaultPrevented && !zone.classList.contains('is-drop-target');
"""

# The files of a message element: each image's thumbnail and each document's link.
SENT_FILES_JS = """
const el = document.querySelector(`#message-list .message[data-id="${arguments[0]}"]`);
if (!el) return null;
return [...el.querySelectorAll('.message-files > li')].map((item) => {
  const open = item.querySelector('.message-file-open');
  const link = item.querySelector('a.message-file-chip');
  if (open) {
    const img = open.querySelector('img');
    return {kind: 'image', id: open.dataset.fileId, src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0};
  }
  return {kind: 'document', href: link.getAttribute('href'), download: link.getAttribute('download'),
          text: link.textContent};
});
"""


def chips(driver):
    return driver.execute_script(CHIPS_JS)


def attach(driver, tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    driver.find_element(By.ID, "attach-input").send_keys(str(path))


def settled(driver, count):
    """Waits until `count` chips are shown and none uploads; returns them."""
    return wait_until(lambda: (lambda shown: shown if len(shown) == count and all(c["state"] != "uploading" for c in shown)
                               else None)(chips(driver)), timeout=30, message=f"{count} chips done uploading")


def throttle(driver, bytes_per_second):
    """Slows the browser's uploads (CDP network emulation); None lifts it."""
    driver.execute_cdp_cmd("Network.enable", {})
    if bytes_per_second is None:
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    else:
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": bytes_per_second})


def stored_files(server):
    answer = server.api("GET", "/api/files")
    if isinstance(answer, list):
        return answer
    return answer.get("files") or answer.get("items") or answer.get("data") or []


def sent_question_id(driver):
    return wait_until(lambda: driver.execute_script(
        "const m = document.querySelectorAll('#message-list .message.role-user');"
        "return m.length ? m[m.length - 1].dataset.id : null;"), message="the sent question")


def answer_text(driver):
    return driver.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{last_assistant_id(driver)}'] .message-body").text


def send_text(driver, text):
    before = len(messages(driver))
    box = driver.find_element(By.ID, "input")
    box.click()
    box.send_keys(text)
    box.send_keys(Keys.ENTER)
    wait_until(lambda: len(messages(driver)) >= before + 2, message="the sent message and its answer")


# MARK: - The CSP

def test_the_csp_lets_the_page_show_blob_images_only(browser, parley_fast, request):
    """img-src 'self' blob: (the composer's previews): a blob: image loads; a data: one still does not."""
    request.node.allowed_console = ["violates the following Content Security Policy directive: \"img-src 'self' blob:\""]
    policy = parley_fast.call("GET", "/").headers["Content-Security-Policy"]
    assert "img-src 'self' blob:;" in policy, policy
    open_page(browser, parley_fast.base)
    data = base64.b64encode(png_bytes(7, 5)).decode()
    loaded = browser.execute_async_script("""
        const [data, done] = arguments;
        const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
        const load = (src) => new Promise((resolve) => {
          const img = new Image();
          img.onload = () => resolve(img.naturalWidth);
          img.onerror = () => resolve(0);
          img.src = src;
        });
        const blob = URL.createObjectURL(new Blob([bytes], {type: 'image/png'}));
        Promise.all([load(blob), load('data:image/png;base64,' + data)]).then(done);
    """, data)
    assert loaded == [7, 0], loaded


# MARK: - Choosing, progress, removing

def test_a_chosen_image_shows_its_preview_and_progress_then_is_ready(browser, parley_fast, tmp_path, artifacts, request):
    request.node.allowed_console = ["net::ERR_FILE_NOT_FOUND"]  # the revoked preview, loaded on purpose
    open_page(browser, parley_fast.base)
    button = browser.find_element(By.ID, "attach")
    assert button.accessible_name == "Attach files"
    browser.execute_script(RECORD_JS)
    throttle(browser, 64 * 1024)  # ~200 KB: about three seconds
    try:
        attach(browser, tmp_path, "noise.png", png_bytes(256, 256))
        first = wait_until(lambda: chips(browser), message="the chip, at once")[0]
        assert first["name"] == "noise.png" and first["state"] == "uploading", first
        # The preview is the file itself, a blob: URL the CSP lets through (img-src 'self' blob:).
        assert first["preview"]["src"].startswith("blob:"), first
        wait_until(lambda: chips(browser)[0]["preview"]["width"] == 256, message="the local preview drawn")
        assert browser.find_element(By.ID, "send").get_attribute("disabled") is not None, "Send waits for the upload"
        progress = browser.find_element(By.CSS_SELECTOR, "#attachment-tray .attachment-progress")
        assert progress.aria_role == "progressbar" and progress.accessible_name == "Uploading noise.png"
        wait_until(lambda: any(0 < value < 100 for state, value, _ in browser.execute_script("return window.__chipStates")
                               if state == "uploading"), timeout=20, message="progress between 0 and 100")
        screenshot(browser, artifacts, "attachments-uploading")
    finally:
        throttle(browser, None)
    (chip,) = settled(browser, 1)
    assert chip["state"] == "done" and chip["status"].startswith("Ready"), chip
    assert chip["progress"] is None and chip["error"] is None and chip["warning"] is None, chip
    assert browser.find_element(By.ID, "send").get_attribute("disabled") is None, "Send again once uploaded"
    seen = [state for state, _, _ in browser.execute_script("return window.__chipStates")]
    assert "uploading" in seen and seen[-1] == "done", seen
    assert any(record["filename"] == "noise.png" for record in stored_files(parley_fast))

    # Remove: the chip goes, its preview is let go, the focus stays in the composer.
    preview = chip["preview"]["src"]
    remove = browser.find_element(By.CSS_SELECTOR, "#attachment-tray .attachment-remove")
    assert remove.accessible_name == "Remove noise.png"
    remove.click()
    wait_until(lambda: chips(browser) == [], message="the chip removed")
    assert not browser.find_element(By.ID, "attachment-tray").is_displayed()
    assert browser.switch_to.active_element.get_attribute("id") == "input"
    # (As an image: the CSP's img-src lets blob: through, so only a revoked URL fails to load.)
    revoked = browser.execute_async_script(
        "const done = arguments[1]; const img = new Image(); img.onload = () => done(false);"
        " img.onerror = () => done(true); img.src = arguments[0];", preview)
    assert revoked, "the preview's blob URL is revoked"


def test_remove_cancels_an_upload_in_flight(browser, parley_fast, tmp_path):
    open_page(browser, parley_fast.base)
    before = {record["id"] for record in stored_files(parley_fast)}
    throttle(browser, 16 * 1024)  # ~300 KB: far longer than the test waits
    try:
        attach(browser, tmp_path, "slow.png", png_bytes(320, 320, seed=2))
        wait_until(lambda: any(0 < (c["progress"] or 0) < 100 for c in chips(browser)), message="the upload under way")
        browser.find_element(By.CSS_SELECTOR, "#attachment-tray .attachment-remove").click()
        wait_until(lambda: chips(browser) == [], message="the chip removed")
        assert browser.find_element(By.ID, "send").get_attribute("disabled") is None, "nothing uploads any more"
    finally:
        throttle(browser, None)
    after = {record["id"] for record in stored_files(parley_fast)}
    assert after == before, "a cancelled upload stores nothing"


# MARK: - Paste, drop, send and display

def test_pasted_and_dropped_images_are_sent_and_shown(browser, parley_fast, artifacts):
    open_page(browser, parley_fast.base)
    pasted = base64.b64encode(png_bytes(120, 80, seed=3)).decode()
    dropped = base64.b64encode(png_bytes(64, 48, seed=4)).decode()
    assert browser.execute_script(FILE_EVENT_JS, "paste", "pasted.png", "image/png", pasted), "the paste is taken"
    assert browser.execute_script(FILE_EVENT_JS, "drop", "dropped.png", "image/png", dropped), "the drop is taken"
    shown = settled(browser, 2)
    assert [c["name"] for c in shown] == ["pasted.png", "dropped.png"], shown
    assert all(c["state"] == "done" and c["preview"]["src"].startswith("blob:") for c in shown), shown
    assert browser.find_element(By.ID, "input").get_attribute("value") == "", "nothing pasted as text"
    assert_accessible(browser, "attachment chips")

    send_text(browser, "What do these show?")
    wait_idle(browser)
    assert chips(browser) == [], "sending clears the chips"
    question = sent_question_id(browser)
    stored = parley_fast.api("GET", f"/api/messages/{question}")
    parts = [part for part in stored.get("parts") or [] if part.get("type") == "file"]
    assert [part["filename"] for part in parts] == ["pasted.png", "dropped.png"], stored
    assert all(part["kind"] == "image" for part in parts), parts
    # The demo model describes what it was sent: both images, at their sizes.
    answer = answer_text(browser)
    assert "120×80" in answer and "64×48" in answer, answer
    files = wait_until(lambda: (lambda f: f if f and all(x["loaded"] for x in f) else None)(
        browser.execute_script(SENT_FILES_JS, question)), message="the thumbnails loaded")
    assert [f["id"] for f in files] == [part["file_id"] for part in parts], files
    assert all(f["kind"] == "image" and f["src"].endswith("?variant=thumb") for f in files), files
    screenshot(browser, artifacts, "attachments-sent")
    assert_accessible(browser, "sent images")

    open_and_close_larger(browser, question, "pasted.png", 120)
    # After a reload the stored parts draw the same images.
    browser.refresh()
    wait_until(lambda: (lambda f: f if f and all(x["loaded"] for x in f) else None)(
        browser.execute_script(SENT_FILES_JS, question)), message="the thumbnails after a reload")
    open_and_close_larger(browser, question, "pasted.png", 120, check_axe=False)


def open_and_close_larger(driver, message_id, name, width, check_axe=True):
    """Opens the image `name` of the message larger (keyboard), checks it, closes it with Escape."""
    thumb = driver.find_element(
        By.CSS_SELECTOR, f"#message-list .message[data-id='{message_id}'] .message-file-open[data-filename='{name}']")
    assert thumb.accessible_name == f"View {name}"
    thumb.send_keys(Keys.ENTER)
    dialog = driver.find_element(By.ID, "image-dialog")
    wait_until(lambda: dialog.is_displayed() and driver.execute_script(
        "const i = document.getElementById('image-dialog-image'); return i.complete && i.naturalWidth > 0;"),
        message="the image shown larger")
    image = driver.find_element(By.ID, "image-dialog-image")
    assert driver.execute_script("return arguments[0].naturalWidth", image) == width
    assert image.get_attribute("alt") == name
    assert driver.find_element(By.ID, "image-dialog-title").text == name
    assert dialog.accessible_name == name
    assert driver.switch_to.active_element.get_attribute("id") == "image-dialog-close", "the focus moves into the dialog"
    if check_axe:
        assert_accessible(driver, "image opened larger")
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_until(lambda: not dialog.is_displayed(), message="Escape closes the image")
    active = driver.switch_to.active_element
    assert active.get_attribute("data-filename") == name, "the focus goes back to the thumbnail"


def test_a_document_is_a_chip_that_downloads(browser, parley_fast, tmp_path):
    text = "# Notes\n\nThe *same* bytes come back.\n"
    open_page(browser, parley_fast.base)
    attach(browser, tmp_path, "notes.md", text.encode())
    (chip,) = settled(browser, 1)
    assert chip["state"] == "done" and chip["preview"] is None, chip
    send_text(browser, "Summarise my notes")
    wait_idle(browser)
    question = sent_question_id(browser)
    assert "notes.md" in answer_text(browser), "the model was sent the document"
    (shown,) = browser.execute_script(SENT_FILES_JS, question)
    assert shown["kind"] == "document" and shown["download"] == "notes.md" and "notes.md" in shown["text"], shown
    assert shown["href"].startswith("/api/files/") and "?" not in shown["href"], shown
    link = browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{question}'] a.message-file-chip")
    assert link.accessible_name == "Download notes.md"
    body = browser.execute_async_script(
        "const done = arguments[1]; fetch(arguments[0]).then(async (r) => done({status: r.status,"
        " disposition: r.headers.get('Content-Disposition'), text: await r.text()}));", shown["href"])
    assert body["status"] == 200 and body["text"] == text, body
    assert body["disposition"].startswith("attachment"), body


# MARK: - Refusals and warnings

def test_an_unsupported_file_gets_an_error_chip_and_is_not_sent(browser, parley_fast, tmp_path, request):
    request.node.allowed_console = ["status of 415"]  # the refused upload
    open_page(browser, parley_fast.base)
    attach(browser, tmp_path, "archive.zip", zip_bytes())
    attach(browser, tmp_path, "fine.png", png_bytes(40, 30, seed=5))
    failed, fine = settled(browser, 2)
    assert failed["state"] == "failed" and failed["status"] == "Not attached", failed
    assert "Parley takes images (PNG, JPEG, GIF, WebP) and documents" in failed["error"], failed
    assert not failed["retry"], "a refusal is not worth trying again"
    assert fine["state"] == "done", fine
    assert_accessible(browser, "an error chip")

    send_text(browser, "Only the picture")
    wait_idle(browser)
    question = sent_question_id(browser)
    stored = parley_fast.api("GET", f"/api/messages/{question}")
    names = [part["filename"] for part in stored.get("parts") or [] if part.get("type") == "file"]
    assert names == ["fine.png"], stored
    assert chips(browser) == [], "sending clears the failed chip too"


def test_a_model_without_vision_says_so_at_an_image_chip(browser, parley_fake, tmp_path):
    models = parley_fake.api("GET", "/api/models")["models"]
    vision = {model["id"]: model.get("vision") for model in models}
    assert vision.get("openai:fake") is False, vision
    created = parley_fake.api("POST", "/api/conversations", {"title": "No eyes", "model": "openai:fake"})
    open_page(browser, parley_fake.base, f"/#/c/{created['id']}")
    wait_until(lambda: browser.find_element(By.ID, "model").get_attribute("value") == "openai:fake",
               message="the conversation's model shown")
    attach(browser, tmp_path, "photo.png", png_bytes(32, 32, seed=6))
    attach(browser, tmp_path, "readme.txt", b"plain words\n")
    photo, readme = settled(browser, 2)
    assert photo["warning"] and "cannot see images" in photo["warning"], photo
    assert readme["warning"] is None, "a document needs no vision"
    assert_accessible(browser, "vision warning")


def test_a_file_over_the_limit_says_it_is_too_big(browser, parley_small_files, tmp_path, request):
    request.node.allowed_console = ["status of 413"]  # the refused upload
    open_page(browser, parley_small_files.base)
    attach(browser, tmp_path, "big.png", png_bytes(64, 64, seed=7))  # ~12 KB
    (chip,) = settled(browser, 1)
    assert chip["state"] == "failed" and chip["error"].startswith("Too big ("), chip
    assert "limit" in chip["error"] and "smaller file" in chip["error"] and not chip["retry"], chip
    assert stored_files(parley_small_files) == [], "nothing stored"
