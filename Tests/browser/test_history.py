"""A conversation's history on the page: generation settings (saved, sent upstream, checked, set before
the first send, changed in another tab), usage per reply (streamed, reloaded, estimated), export
(download links whose files are right) and import (an exported file, several, hostile files)."""
import copy
import json
import tempfile
import uuid
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from conftest import TEAM_ADMIN, conversation_action, last_assistant_id, messages, open_page, send_message, start_parley, wait_idle, wait_until
from fake_upstream import FakeUpstream


# MARK: - Helpers

@pytest.fixture(scope="module")
def recording():
    """The upstream of PARLEY_OPENAI_MODELS "rec": records each request body (`requests`) and streams a
    short answer without usage (so the server estimates it)."""
    upstream = FakeUpstream(answer=["Recorded answer."])
    yield upstream
    upstream.stop()


@pytest.fixture(scope="module")
def parley_recorded(artifacts, recording):
    server = start_parley("recorded", {"PARLEY_OPENAI_BASE_URL": recording.base_url,
                                       "PARLEY_OPENAI_MODELS": "rec",
                                       "PARLEY_DEMO_TOKENS_PER_SECOND": "300"})
    yield server
    server.stop()


@pytest.fixture
def downloads(session_driver):
    """Chrome saves downloads into a temporary folder for the test (set through CDP)."""
    folder = tempfile.mkdtemp(prefix="parley-downloads-")
    session_driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": folder})
    yield Path(folder)
    session_driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "default"})


def downloaded(folder, name, timeout=15):
    """The text of a finished download (Chrome writes *.crdownload until it is complete)."""
    path = folder / name
    wait_until(lambda: path.is_file() and not (folder / f"{name}.crdownload").exists(), timeout=timeout,
               message=f"the download {name} (folder has {[p.name for p in folder.iterdir()]})")
    return wait_until(lambda: path.read_text(encoding="utf-8"), message=f"{name} written")


def by_id(driver, element_id):
    return driver.find_element(By.ID, element_id)


def open_recorded(driver, server):
    """A fresh page whose first send goes to the recording upstream."""
    open_page(driver, server.base)
    Select(by_id(driver, "model")).select_by_value("openai:rec")


def open_settings(driver):
    if not by_id(driver, "settings-dialog").get_attribute("open"):
        by_id(driver, "system-toggle").click()
    wait_until(lambda: by_id(driver, "system-form").is_displayed(), message="the settings form")


def close_settings(driver):
    """Chat settings is a modal dialog: closed before the page behind it is used."""
    if by_id(driver, "settings-dialog").get_attribute("open"):
        by_id(driver, "system-cancel").click()
    wait_until(lambda: not by_id(driver, "settings-dialog").get_attribute("open"), message="the settings closed")


def set_field(driver, element_id, text):
    field = by_id(driver, element_id)
    field.clear()
    if text:
        field.send_keys(text)


def save_settings(driver):
    driver.find_element(By.CSS_SELECTOR, "#system-form button[type='submit']").click()


def status(driver, element_id="system-status"):
    return by_id(driver, element_id).text


def open_id(driver):
    return wait_until(lambda: driver.current_url.split("#/c/")[1] if "#/c/" in driver.current_url else None,
                      message="a conversation open")


def usage_of(driver, message_id):
    """The usage shown on a message: visible text, spoken text, estimated flag; None when not shown."""
    return driver.execute_script(
        "const el = document.querySelector(`#message-list .message[data-id='${arguments[0]}'] .message-usage`);"
        "if (!el || el.hidden) return null;"
        "return {shown: el.firstElementChild.textContent, spoken: el.lastElementChild.textContent,"
        "        estimated: el.dataset.estimated};", message_id)


def all_titles(server):
    titles, cursor = [], None
    while True:
        page = server.api("GET", "/api/conversations?limit=200" + (f"&cursor={cursor}" if cursor else ""))
        titles += [item["title"] for item in page["items"]]
        cursor = page.get("next_cursor")
        if not cursor:
            return titles


def conversation_with_reply(server, title):
    """A conversation with one finished demo turn, made through the API; returns its export."""
    conversation = server.api("POST", "/api/conversations", {"title": title})
    turn = server.api("POST", f"/api/conversations/{conversation['id']}/messages", {"content": f"About {title}"})
    server.wait_finished(turn["assistant_message"]["id"])
    return server.api("GET", f"/api/conversations/{conversation['id']}/export?format=json")


def choose_file(driver, folder, name, text):
    path = Path(folder) / name
    path.write_text(text, encoding="utf-8")
    driver.execute_script("document.getElementById('transfer-status').textContent = ''")
    by_id(driver, "import-file").send_keys(str(path))


# MARK: - Generation settings

def test_settings_are_saved_and_sent_with_every_reply(browser, parley_recorded, recording):
    open_recorded(browser, parley_recorded)
    send_message(browser, "First question")
    wait_idle(browser)
    conversation_id = open_id(browser)
    assert "temperature" not in recording.requests[-1], "no setting: the provider's default"

    open_settings(browser)
    assert by_id(browser, "settings-temperature").get_attribute("value") == ""
    set_field(browser, "settings-temperature", "0.3")
    set_field(browser, "settings-top-p", "0.9")
    set_field(browser, "settings-max-tokens", "256")
    save_settings(browser)
    wait_until(lambda: status(browser) == "Saved.", message="saved")
    stored = parley_recorded.api("GET", f"/api/conversations/{conversation_id}")
    assert (stored["temperature"], stored["top_p"], stored["max_tokens"]) == (0.3, 0.9, 256)

    close_settings(browser)
    send_message(browser, "Second question")
    wait_idle(browser)
    sent = recording.requests[-1]
    assert sent["temperature"] == 0.3 and sent["top_p"] == 0.9, sent
    assert sent.get("max_tokens", sent.get("max_completion_tokens")) == 256, sent

    # After a reload the form shows them, with the conversation's totals (this upstream gives no
    # usage: both replies are estimates).
    browser.refresh()
    open_page(browser, parley_recorded.base, f"/#/c/{conversation_id}")
    open_settings(browser)
    wait_until(lambda: by_id(browser, "settings-temperature").get_attribute("value") == "0.3", message="shown")
    assert by_id(browser, "settings-top-p").get_attribute("value") == "0.9"
    assert by_id(browser, "settings-max-tokens").get_attribute("value") == "256"
    wait_until(lambda: "over 2 replies (2 estimated)" in by_id(browser, "settings-usage").text,
               message="the conversation's totals")

    # Emptying a field clears it: the provider's default again (sent as null).
    set_field(browser, "settings-temperature", "")
    save_settings(browser)
    wait_until(lambda: parley_recorded.api("GET", f"/api/conversations/{conversation_id}")["temperature"] is None,
               message="temperature cleared")
    assert parley_recorded.api("GET", f"/api/conversations/{conversation_id}")["top_p"] == 0.9

    # A reply that ends while the dialog is open updates the totals.
    close_settings(browser)
    send_message(browser, "Third question")
    open_settings(browser)
    wait_until(lambda: "over 3 replies (3 estimated)" in by_id(browser, "settings-usage").text,
               message="the totals after a reply")
    wait_idle(browser)


def test_invalid_settings_are_refused_with_a_message(browser, parley_fast, request):
    request.node.allowed_console = ["status of 400"]  # the refusal the test provokes
    conversation = parley_fast.api("POST", "/api/conversations", {"title": "Refused settings"})
    open_page(browser, parley_fast.base, f"/#/c/{conversation['id']}")
    wait_until(lambda: by_id(browser, "conversation-title").text == "Refused settings", message="opened")
    open_settings(browser)

    # The page's own check: out of range, not a whole number.
    set_field(browser, "settings-temperature", "3")
    save_settings(browser)
    wait_until(lambda: "Temperature must be a number from 0 to 2" in status(browser), message="range refused")
    assert by_id(browser, "settings-temperature").get_attribute("aria-invalid") == "true"
    assert browser.switch_to.active_element.get_attribute("id") == "settings-temperature"
    set_field(browser, "settings-temperature", "1")
    set_field(browser, "settings-max-tokens", "1.5")
    save_settings(browser)
    wait_until(lambda: "Max tokens must be a whole number" in status(browser), message="integer refused")
    assert by_id(browser, "settings-temperature").get_attribute("aria-invalid") is None

    # The server's limit (configurable, so only the server knows it): its message is shown.
    set_field(browser, "settings-max-tokens", "99999")
    save_settings(browser)
    wait_until(lambda: "'max_tokens' must be an integer from 1 to 32768" in status(browser),
               message="the server's 400 shown")
    assert by_id(browser, "settings-max-tokens").get_attribute("aria-invalid") == "true"
    stored = parley_fast.api("GET", f"/api/conversations/{conversation['id']}")
    assert (stored["temperature"], stored["max_tokens"]) == (None, None), "nothing saved"


def test_settings_on_a_fresh_page_apply_to_the_first_send(browser, parley_fast):
    open_page(browser, parley_fast.base)
    open_settings(browser)
    set_field(browser, "system-prompt", "Be brief.")
    set_field(browser, "settings-temperature", "1.5")
    set_field(browser, "settings-max-tokens", "300")
    save_settings(browser)
    wait_until(lambda: status(browser) == "Saved for the new conversation.", message="kept for the first send")
    close_settings(browser)
    send_message(browser, "Fresh settings")
    conversation_id = open_id(browser)
    stored = parley_fast.api("GET", f"/api/conversations/{conversation_id}")
    assert stored["system_prompt"] == "Be brief."
    assert (stored["temperature"], stored["top_p"], stored["max_tokens"]) == (1.5, None, 300)
    wait_idle(browser)


def test_settings_changed_in_another_tab_are_shown(browser, parley_fast):
    conversation = parley_fast.api("POST", "/api/conversations", {"title": "Shared settings"})
    cid = conversation["id"]
    open_page(browser, parley_fast.base, f"/#/c/{cid}")
    wait_until(lambda: by_id(browser, "conversation-title").text == "Shared settings", message="opened")
    open_settings(browser)
    parley_fast.api("PATCH", f"/api/conversations/{cid}", {"temperature": 0.9, "system_prompt": "Elsewhere"})
    wait_until(lambda: by_id(browser, "settings-temperature").get_attribute("value") == "0.9",
               message="another tab's temperature shown")
    assert by_id(browser, "system-prompt").get_attribute("value") == "Elsewhere"
    # A field being edited is not overwritten by the next change from elsewhere.
    set_field(browser, "settings-top-p", "0.5")
    parley_fast.api("PATCH", f"/api/conversations/{cid}", {"temperature": 1.2, "title": "Shared settings 2"})
    wait_until(lambda: by_id(browser, "conversation-title").text == "Shared settings 2", message="the change seen")
    assert by_id(browser, "settings-top-p").get_attribute("value") == "0.5"
    save_settings(browser)
    wait_until(lambda: status(browser) == "Saved.", message="saved")
    assert parley_fast.api("GET", f"/api/conversations/{cid}")["top_p"] == 0.5


# MARK: - Usage

def test_usage_is_shown_per_reply_after_streaming_and_after_reload(browser, parley_fast):
    open_page(browser, parley_fast.base)
    send_message(browser, "Count my tokens")
    answer_id = last_assistant_id(browser)
    wait_idle(browser)
    stored = parley_fast.api("GET", f"/api/messages/{answer_id}")["usage"]
    expected = f"{stored['input_tokens']:,} in · {stored['output_tokens']:,} out"
    wait_until(lambda: usage_of(browser, answer_id), message="usage from the done event")
    shown = usage_of(browser, answer_id)
    assert shown["shown"] == expected and shown["estimated"] == "false", shown
    assert shown["spoken"].startswith("Tokens:") and "estimated" not in shown["spoken"]
    user_id = messages(browser, "user")[-1].get_attribute("data-id")
    assert usage_of(browser, user_id) is None, "a question has no usage"
    browser.refresh()
    wait_until(lambda: usage_of(browser, answer_id), message="usage after reload")
    assert usage_of(browser, answer_id)["shown"] == expected


def test_estimated_usage_is_marked(browser, parley_recorded):
    open_recorded(browser, parley_recorded)
    send_message(browser, "Estimate me")
    answer_id = last_assistant_id(browser)
    wait_idle(browser)
    shown = wait_until(lambda: usage_of(browser, answer_id), message="usage shown")
    assert shown["estimated"] == "true" and shown["shown"].startswith("≈ "), shown
    assert shown["spoken"].endswith("(estimated)."), shown
    stored = parley_recorded.api("GET", f"/api/messages/{answer_id}")["usage"]
    assert stored["estimated"] is True
    assert shown["shown"] == f"≈ {stored['input_tokens']:,} in · {stored['output_tokens']:,} out"


# MARK: - Export

def test_export_links_download_the_conversation_and_everything(browser, parley_fast, downloads):
    open_page(browser, parley_fast.base)
    assert not by_id(browser, "conversation-actions").is_displayed(), "nothing to export on a fresh page"
    send_message(browser, "Export me please")
    wait_idle(browser)
    cid = open_id(browser)
    toggle = by_id(browser, "conversation-actions")
    conversation_action(browser, "export-json")
    # The file is named after the title (Content-Disposition), not the id.
    exported = json.loads(downloaded(downloads, "parley-Export-me-please.json"))
    assert exported == parley_fast.api("GET", f"/api/conversations/{cid}/export?format=json")
    assert exported["parley_export"] == 1 and len(exported["messages"]) == 2
    assert toggle.get_attribute("aria-expanded") == "false", "the menu closes after a choice"

    conversation_action(browser, "export-markdown")
    markdown = downloaded(downloads, "parley-Export-me-please.md")
    assert "## User" in markdown and "Export me please" in markdown and "## Assistant" in markdown

    by_id(browser, "export-all").click()
    everything = json.loads(downloaded(downloads, "parley-export.json"))
    assert cid in [conversation["id"] for conversation in everything["conversations"]]


# MARK: - Import

def test_import_of_an_exported_file_creates_and_opens_it(browser, parley_fast):
    title = f"Imported {uuid.uuid4().hex[:8]}"
    exported = conversation_with_reply(parley_fast, title)
    open_page(browser, parley_fast.base)
    folder = tempfile.mkdtemp(prefix="parley-import-")
    choose_file(browser, folder, "one.json", json.dumps(exported))
    wait_until(lambda: status(browser, "transfer-status") == "Imported 1 conversation.", message="imported")
    new_id = open_id(browser)
    assert new_id != exported["id"]
    wait_until(lambda: by_id(browser, "conversation-title").text == title, message="the import opened")
    wait_until(lambda: len(messages(browser)) == 2, message="its messages shown")
    assert f"About {title}" in messages(browser, "user")[0].text
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, f"#conversation-list a[href='#/c/{new_id}']"),
               message="listed in the sidebar")
    again = parley_fast.api("GET", f"/api/conversations/{new_id}/export?format=json")
    assert [m["content"] for m in again["messages"]] == [m["content"] for m in exported["messages"]]

    # Several at once: listed, announced, none opened.
    second = conversation_with_reply(parley_fast, f"{title} B")
    both = {"parley_export": 1, "conversations": [
        {k: v for k, v in doc.items() if k != "parley_export"} for doc in (exported, second)]}
    browser.get(parley_fast.base + "/#/")
    open_page(browser, parley_fast.base)
    choose_file(browser, folder, "two.json", json.dumps(both))
    wait_until(lambda: status(browser, "transfer-status") == "Imported 2 conversations.", message="imported two")
    assert "#/c/" not in browser.current_url
    wait_until(lambda: sum(1 for t in all_titles(parley_fast) if t == title) == 3, message="stored")
    wait_until(lambda: browser.find_elements(By.XPATH, f"//ul[@id='conversation-list']//a[.='{title} B']"),
               message="listed")


def test_hostile_imports_show_the_error_and_import_nothing(browser, parley_fast, request):
    request.node.allowed_console = ["/api/import"]  # the refusals the test provokes
    title = f"Hostile {uuid.uuid4().hex[:8]}"
    exported = conversation_with_reply(parley_fast, title)
    hostile = copy.deepcopy(exported)
    hostile["title"] = f"{title} copy"
    open_page(browser, parley_fast.base)
    folder = tempfile.mkdtemp(prefix="parley-hostile-")

    def refused(name, text, expected):
        choose_file(browser, folder, name, text)
        wait_until(lambda: status(browser, "transfer-status").startswith("Not imported:"), message=f"{name} refused")
        shown = status(browser, "transfer-status")
        assert expected in shown, shown
        assert "is-error" in by_id(browser, "transfer-status").get_attribute("class")
        assert "#/c/" not in browser.current_url

    refused("notes.json", "these are notes, not JSON", "notes.json is not a JSON file")

    cycle = copy.deepcopy(hostile)
    cycle["messages"][0]["parent_id"] = cycle["messages"][1]["id"]
    refused("cycle.json", json.dumps(cycle), "form a cycle")

    streaming = copy.deepcopy(hostile)
    streaming["messages"][1]["status"] = "streaming"
    refused("streaming.json", json.dumps(streaming), "messages[1].status: a message that is 'streaming' cannot")

    # Larger than the server's import limit (PARLEY_MAX_IMPORT_BYTES, 1 MiB here): its 413 is shown.
    huge = copy.deepcopy(hostile)
    huge["messages"][0]["content"] = "x" * (1_100_000)
    refused("huge.json", json.dumps(huge), "larger than this server accepts")

    assert f"{title} copy" not in all_titles(parley_fast), "nothing imported"


def test_export_and_import_in_team_mode_carry_the_session(browser, parley_team, downloads, request):
    """The download links and the import are the signed-in user's (the session cookie goes along)."""
    request.node.allowed_console = ["status of 401"]  # the page's requests before signing in
    browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
    try:
        browser.get(parley_team.base + "/")
        wait_until(lambda: by_id(browser, "signin").is_displayed(), message="the sign-in form")
        by_id(browser, "signin-username").send_keys(TEAM_ADMIN[0])
        by_id(browser, "signin-password").send_keys(TEAM_ADMIN[1], Keys.ENTER)
        wait_until(lambda: by_id(browser, "account").is_displayed() and browser.execute_script(
            "return document.getElementById('model').options.length > 0"), message="signed in")
        send_message(browser, "Team export")
        wait_idle(browser)
        cid = open_id(browser)
        conversation_action(browser, "export-json")
        exported = json.loads(downloaded(downloads, "parley-Team-export.json"))
        assert exported["id"] == cid and len(exported["messages"]) == 2
        by_id(browser, "export-all").click()
        assert cid in [c["id"] for c in json.loads(downloaded(downloads, "parley-export.json"))["conversations"]]
        choose_file(browser, downloads, "again.json", json.dumps(exported))
        wait_until(lambda: status(browser, "transfer-status") == "Imported 1 conversation.", message="imported")
        wait_until(lambda: open_id(browser) != cid, message="the import opened")
        wait_until(lambda: len(messages(browser)) == 2, message="its messages shown")
    finally:
        browser.execute_cdp_cmd("Network.clearBrowserCookies", {})


def test_settings_of_a_fresh_page_that_was_left_are_not_kept(browser, parley_fast):
    """Settings saved on a fresh page belong to that page: opening a conversation drops them, so a later
    New conversation does not silently take them."""
    other = parley_fast.api("POST", "/api/conversations", {"title": "Somewhere else"})
    open_page(browser, parley_fast.base)
    open_settings(browser)
    set_field(browser, "settings-temperature", "1.7")
    save_settings(browser)
    wait_until(lambda: status(browser) == "Saved for the new conversation.", message="kept for the first send")
    close_settings(browser)
    browser.get(f"{parley_fast.base}/#/c/{other['id']}")
    wait_until(lambda: by_id(browser, "conversation-title").text == "Somewhere else", message="the other one open")
    by_id(browser, "new-conversation").click()
    wait_until(lambda: browser.current_url.endswith("#/"), message="a fresh page")
    send_message(browser, "No leftover settings")
    stored = parley_fast.api("GET", f"/api/conversations/{open_id(browser)}")
    assert stored["temperature"] is None, "the left page's settings were applied"
    wait_idle(browser)


def test_a_second_import_while_one_runs_says_so(browser, parley_fast):
    """Choosing a file while an import is still running is refused with a message, not ignored."""
    title = f"Held import {uuid.uuid4().hex[:8]}"
    exported = conversation_with_reply(parley_fast, title)
    open_page(browser, parley_fast.base)
    # Hold the page's POST /api/import until the test lets it go.
    browser.execute_script("""
        const original = window.fetch;
        window.parleyRelease = null;
        const held = new Promise((resolve) => { window.parleyRelease = resolve; });
        window.fetch = async (...args) => {
          if (String(args[0]).includes('/api/import')) await held;
          return original(...args);
        };""")
    folder = tempfile.mkdtemp(prefix="parley-import-")
    choose_file(browser, folder, "first.json", json.dumps(exported))
    wait_until(lambda: status(browser, "transfer-status") == "Importing first.json…", message="the first running")
    path = Path(folder) / "second.json"
    path.write_text(json.dumps(exported), encoding="utf-8")
    by_id(browser, "import-file").send_keys(str(path))
    wait_until(lambda: status(browser, "transfer-status").startswith("second.json was not imported: an import is "
                                                                      "still running"), message="the refusal")
    browser.execute_script("window.parleyRelease()")
    wait_until(lambda: status(browser, "transfer-status") == "Imported 1 conversation.", message="the first done")
    wait_until(lambda: sum(1 for t in all_titles(parley_fast) if t == title) == 2, message="imported once")


def test_a_first_send_refused_for_its_settings_opens_them_and_retry_sends(browser, parley_fast, request):
    """A max_tokens over the server's limit (which only the server knows) is kept for the first send; the
    server refuses the new conversation: the settings open with the field marked, and once it is fixed the
    failed message's Retry sends."""
    request.node.allowed_console = ["status of 400"]  # the refused create
    open_page(browser, parley_fast.base)
    open_settings(browser)
    set_field(browser, "settings-max-tokens", "99999")
    save_settings(browser)
    wait_until(lambda: status(browser) == "Saved for the new conversation.", message="kept for the first send")
    by_id(browser, "system-cancel").click()
    box = browser.find_element(By.CSS_SELECTOR, "textarea[aria-label='Message']")
    box.click()
    box.send_keys("Refused for its settings", Keys.ENTER)
    wait_until(lambda: by_id(browser, "system-form").is_displayed(), message="the settings opened")
    field = by_id(browser, "settings-max-tokens")
    assert field.get_attribute("aria-invalid") == "true"
    assert "'max_tokens' must be an integer from 1 to 32768" in status(browser)
    failed = wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "#message-list .message .message-error"),
                        message="the failed message")[0]
    set_field(browser, "settings-max-tokens", "200")
    save_settings(browser)
    wait_until(lambda: status(browser) == "Saved for the new conversation.", message="the fix kept")
    close_settings(browser)
    failed.find_element(By.CSS_SELECTOR, "button[data-action='retry']").click()
    conversation_id = open_id(browser)
    assert parley_fast.api("GET", f"/api/conversations/{conversation_id}")["max_tokens"] == 200
    wait_idle(browser)
