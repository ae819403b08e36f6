"""Issue 12, accessibility: axe-core 4 (axe_check.py) finds no serious or critical violation and no text
contrast it cannot decide, in the dark and in the light colour scheme, on the empty page, an answer
while it streams and once finished (with a code block and a table wider than the page, and a link), a
long reasoning while the model thinks and once answered, a failed reply, the settings form (with a refused value), a reply's
usage, the Export menu, an import's error, search results and a refused query, the Pinned group,
the archived list, the phone-width drawer, and
the Rename and Delete dialogs, and team mode's sign-in screen, user menu, Users, API tokens, Sessions
and Change password dialogs. A check of the check: a page with known violations fails it. The live
regions for the search count and the import's status stay rendered while empty.

Other screens call `assert_accessible(driver, "what is shown")` from axe_check the same way, once the
state to check is on the page (waited for, never slept for)."""
import secrets
import string
import threading
import urllib.error

import fake_upstream as fake_upstream_module
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from axe_check import assert_accessible
from conftest import (TEAM_ADMIN, conversation_action, last_assistant_id, open_conversation_menu, open_page, send_message,
                      wait_idle, wait_until)
from test_team import ALLOWED, open_menu_item, shown, sign_in, start_signed_out

# An answer with a link, a code block and a table (both wider than the page, so they scroll); it pauses (answer_gate) before its last chunk.
RICH_ANSWER = [
    "Here is [the documentation](https://example.com/docs) and some code:\n\n",
    "```python\ndef greet(name):\n    return f\"Hello, {name}!\"\n"
    f"LONG_LINE = \"{'wide ' * 80}\"  # wider than the page: the block scrolls\n```\n\n",
    "| Model | Tokens |\n| --- | ---: |\n| demo | 42 |\n| fake | 7 |\n\n",
    "|" + "".join(f" Column {n} |" for n in range(40)) + "\n|" + " --- |" * 40 + "\n|" + " 1234567 |" * 40 + "\n\n",
    "That is all.\n",
]


def message_element(driver, message_id):
    return driver.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{message_id}']")


# MARK: - The helper itself

def test_the_check_fails_on_known_violations(browser, parley_fast):
    """Low contrast in dark only, an autocomplete value no browser knows, a link inside a button (a rule
    only axe-core 4 has) and text half under a positioned box (contrast axe cannot decide): all are
    reported. Text entirely under a box is not (nobody sees it)."""
    open_page(browser, parley_fast.base)
    browser.execute_script("""
        const head = document.querySelector('.sidebar-head');
        const field = document.createElement('input');
        field.id = 'a11y-bad-field'; field.setAttribute('aria-label', 'Bad field');
        field.setAttribute('autocomplete', 'favourite-colour');
        const outer = document.createElement('button');
        outer.id = 'a11y-nested'; outer.type = 'button'; outer.append('Outer ');
        const inner = document.createElement('a');
        inner.href = '#/'; inner.textContent = 'Inner';
        outer.append(inner);
        head.append(field, outer);
        document.getElementById('send').classList.add('a11y-low-contrast-in-dark');
        for (const [id, cover] of [['a11y-half-covered', 'a11y-half'], ['a11y-covered', 'a11y-whole']]) {
          const box = document.createElement('div');
          box.className = 'a11y-box';
          box.innerHTML = `<p id="${id}">Some words under a box</p><div class="a11y-cover ${cover}"></div>`;
          head.append(box);
        }
        const sheet = new CSSStyleSheet();
        sheet.replaceSync(`@media (prefers-color-scheme: dark) { .a11y-low-contrast-in-dark { color: #555 !important; } }
          .a11y-box { position: relative; } .a11y-box p { margin: 0; }
          .a11y-cover { position: absolute; inset: 0 auto 0 0; background: var(--bg-soft); }
          .a11y-half { width: 50%; } .a11y-whole { width: 100%; }`);
        document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    """)
    with pytest.raises(AssertionError) as failure:
        assert_accessible(browser, "known violations")
    report = str(failure.value)
    assert "autocomplete-valid" in report and "#a11y-bad-field" in report, report
    assert "color-contrast" in report and "dark:" in report and "#send" in report, report
    assert "light:\n  color-contrast" not in report, "the low contrast is in dark only"
    assert "nested-interactive" in report and "#a11y-nested" in report, report
    assert "contrast axe could not decide" in report and "#a11y-half-covered" in report, report
    assert "#a11y-covered" not in report, report
    # The emulated scheme is put back after a check.
    assert browser.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches") is False


def test_live_regions_stay_rendered_while_empty(browser, parley_fast):
    """The search count and the import's status are announced only if they are in the accessibility
    tree when their text arrives: empty, they take no room but are not display:none."""
    made = parley_fast.api("POST", "/api/conversations", {"title": "Live regions"})  # a list, so no "No conversations yet."
    try:
        open_page(browser, parley_fast.base)
        wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, f"#conversation-list li[data-id='{made['id']}']"),
                   message="the list loaded")
        regions = ["search-status", "transfer-status", "conversation-list-status"]
        for region, text, display, visibility, height in live_region_layout(browser, regions):
            assert text == "" and display != "none" and visibility == "visible", (region, display, visibility)
            assert height <= 1, f"{region} takes room while empty: {height}px"
        # Emptied again after a search: still rendered.
        box = browser.find_element(By.ID, "search")
        box.send_keys("zzzznothinglikethis")
        wait_until(lambda: browser.find_element(By.ID, "search-status").text, message="the search count")
        box.send_keys(Keys.ESCAPE)
        wait_until(lambda: browser.find_element(By.ID, "search-status").get_attribute("textContent") == "",
                   message="the count cleared")
        assert [layout[2] for layout in live_region_layout(browser, regions)].count("none") == 0
    finally:
        parley_fast.api("DELETE", f"/api/conversations/{made['id']}")


def live_region_layout(driver, ids):
    """[id, text, display, visibility, height] of each element."""
    return driver.execute_script("""return arguments[0].map((id) => {
        const el = document.getElementById(id), style = getComputedStyle(el);
        return [id, el.textContent, style.display, style.visibility, el.getBoundingClientRect().height];
    });""", ids)


# MARK: - Local mode

def test_empty_page(browser, parley_fast):
    open_page(browser, parley_fast.base)
    assert_accessible(browser, "empty page")


def test_streamed_answer_with_code_table_and_link(browser, parley_fake, fake_upstream):
    gate = threading.Event()
    fake_upstream.mode = "ok"
    fake_upstream.answer = RICH_ANSWER
    fake_upstream.answer_gate = gate
    fake_upstream.answer_gate_index = len(RICH_ANSWER) - 1
    try:
        open_page(browser, parley_fake.base)
        Select(browser.find_element(By.ID, "model")).select_by_value("openai:fake")
        send_message(browser, "Show me a link, some code and a table")
        answer_id = last_assistant_id(browser)
        # Streaming: everything up to the gate is on the page, and the Stop button shows.
        wait_until(lambda: message_element(browser, answer_id).find_elements(By.CSS_SELECTOR, "table td")
                   and shown(browser, "stop"), message="the table while the answer streams")
        assert browser.execute_script(
            "return document.querySelector(`#message-list .message[data-id='${arguments[0]}']`).dataset.status",
            answer_id) == "streaming"
        assert_accessible(browser, "answer while streaming")
        gate.set()
        wait_idle(browser)
        answer = message_element(browser, answer_id)
        assert answer.find_elements(By.CSS_SELECTOR, ".codeblock pre code")
        assert answer.find_elements(By.CSS_SELECTOR, "table th")
        assert answer.find_element(By.CSS_SELECTOR, "a[href='https://example.com/docs']")
        assert_accessible(browser, "finished answer")
    finally:
        gate.set()
        fake_upstream.reset()


def test_long_reasoning_while_thinking(browser, parley_fake, fake_upstream, monkeypatch):
    """A reasoning longer than its box (max-height, scrolls) while the model thinks, and once answered."""
    gate = threading.Event()
    monkeypatch.setattr(fake_upstream_module, "REASONING_CHUNKS", [f"Step {n}: weigh it up.\n" for n in range(40)])
    fake_upstream.mode = "reasoning"
    fake_upstream.reasoning_gate = gate
    try:
        open_page(browser, parley_fake.base)
        Select(browser.find_element(By.ID, "model")).select_by_value("openai:fake")
        send_message(browser, "Think at length")
        answer_id = last_assistant_id(browser)
        text = f"#message-list .message[data-id='{answer_id}'] .reasoning-text"
        wait_until(lambda: "Step 39" in browser.find_element(By.CSS_SELECTOR, text).text, message="the reasoning")
        assert browser.execute_script(
            "const box = document.querySelector(arguments[0]); return box.scrollHeight > box.clientHeight", text)
        assert_accessible(browser, "long reasoning while thinking")
        gate.set()
        wait_idle(browser)
        browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{answer_id}'] .reasoning-summary").click()
        assert_accessible(browser, "long reasoning opened after the answer")
    finally:
        gate.set()
        fake_upstream.reset()
        fake_upstream.mode, fake_upstream.reasoning_gate = "ok", None


def test_failed_reply_and_settings_form(browser, parley_fake, fake_upstream):
    """The inline error with its Retry button, and the settings form under the top bar."""
    fake_upstream.mode = "fail"
    open_page(browser, parley_fake.base)
    Select(browser.find_element(By.ID, "model")).select_by_value("openai:fake")
    send_message(browser, "This will fail")
    answer = message_element(browser, last_assistant_id(browser))
    wait_until(lambda: answer.find_element(By.CSS_SELECTOR, ".message-error").is_displayed(),
               message="the inline error")
    wait_idle(browser)
    browser.find_element(By.ID, "system-toggle").click()
    wait_until(lambda: shown(browser, "system-form"), message="the settings form")
    assert_accessible(browser, "failed reply and settings form")


def test_settings_usage_export_menu_and_import_error(browser, parley_fast, artifacts, request):
    """The conversation settings form with a refused value, a reply's token usage, the Export menu, and
    the sidebar's Export all / Import row showing an import's error."""
    request.node.allowed_console = ["status of 400"]  # the refused import
    open_page(browser, parley_fast.base)
    send_message(browser, "Settings and usage")
    wait_idle(browser)
    answer = message_element(browser, last_assistant_id(browser))
    wait_until(lambda: answer.find_element(By.CSS_SELECTOR, ".message-usage").is_displayed(), message="usage")
    browser.find_element(By.ID, "system-toggle").click()
    wait_until(lambda: shown(browser, "system-form"), message="the settings form")
    field = browser.find_element(By.ID, "settings-temperature")
    field.clear()
    field.send_keys("3")
    browser.find_element(By.CSS_SELECTOR, "#system-form button[type='submit']").click()
    wait_until(lambda: field.get_attribute("aria-invalid") == "true", message="the refused value marked")
    assert_accessible(browser, "settings form with a refused value")
    browser.find_element(By.ID, "system-cancel").click()

    open_conversation_menu(browser)
    assert_accessible(browser, "conversation menu open")
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)

    bad = artifacts / "a11y-not-an-export.json"
    bad.write_text('{"parley_export": 1, "messages": 5}', encoding="utf-8")
    browser.find_element(By.ID, "import-file").send_keys(str(bad))
    wait_until(lambda: browser.find_element(By.ID, "transfer-status").text.startswith("Not imported:"),
               message="the import's error")
    assert_accessible(browser, "import error")


def test_search_results_errors_pinned_group_and_archived_list(browser, parley_fast, request):
    """Search results with highlighted snippets, a refused query, the Pinned group with Pin/Archive in
    the top bar, Fork on each message, and the Show archived list."""
    request.node.allowed_console = ["status of 400"]  # the refused query
    word = "quokka" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(8))
    found = parley_fast.api("POST", "/api/conversations", {"title": "Marsupials"})
    turn = parley_fast.api("POST", f"/api/conversations/{found['id']}/messages", {"content": f"Tell me about the {word}"})
    parley_fast.wait_finished(turn["assistant_message"]["id"])
    parley_fast.api("PATCH", f"/api/conversations/{found['id']}", {"pinned": True})
    stored = parley_fast.api("POST", "/api/conversations", {"title": f"Archived {word}"})
    parley_fast.api("PATCH", f"/api/conversations/{stored['id']}", {"archived": True})
    try:
        check_search_pinned_and_archived(browser, parley_fast, word, found, stored)
    finally:  # parley_fast is shared by the whole session: no Pinned group or archived one left behind
        for conversation in (found, stored):
            parley_fast.api("DELETE", f"/api/conversations/{conversation['id']}")


def check_search_pinned_and_archived(browser, parley_fast, word, found, stored):
    open_page(browser, parley_fast.base, f"/#/c/{found['id']}")
    wait_until(lambda: shown(browser, "pinned-list") and shown(browser, "conversation-actions")
               and browser.find_elements(By.CSS_SELECTOR, "#message-list [data-action='fork']"),
               message="the Pinned group, Pin and Fork")
    assert_accessible(browser, "pinned group, pin, archive and fork")

    box = browser.find_element(By.ID, "search")
    box.send_keys(word)
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "#search-results li mark"), message="a marked snippet")
    assert_accessible(browser, "search results")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("(abc")
    wait_until(lambda: "fts5" in browser.find_element(By.ID, "search-status").text.lower()
               or "syntax" in browser.find_element(By.ID, "search-status").text.lower(), message="the refused query")
    assert_accessible(browser, "search with a refused query")
    box.send_keys(Keys.ESCAPE)

    browser.find_element(By.ID, "show-archived").click()
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, f"#list-view li[data-id='{stored['id']}']"),
               message="the archived list")
    assert_accessible(browser, "archived list")


def test_rename_and_delete_dialogs(browser, parley_fast):
    open_page(browser, parley_fast.base)
    send_message(browser, "A conversation to rename")
    wait_idle(browser)
    conversation_action(browser, "rename")
    wait_until(lambda: browser.find_element(By.ID, "rename-dialog").get_attribute("open"), message="rename")
    assert_accessible(browser, "rename dialog")
    browser.find_element(By.ID, "rename-cancel").click()
    wait_until(lambda: not browser.find_element(By.ID, "rename-dialog").get_attribute("open"), message="closed")
    conversation_action(browser, "delete")
    wait_until(lambda: browser.find_element(By.ID, "delete-dialog").get_attribute("open"), message="delete")
    assert_accessible(browser, "delete dialog")
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)


def test_phone_width_with_the_conversation_drawer_open(browser, parley_fast):
    browser.set_window_size(390, 844)
    open_page(browser, parley_fast.base)
    send_message(browser, "Hello from a phone")
    wait_idle(browser)
    browser.find_element(By.ID, "toggle-sidebar").click()
    wait_until(lambda: browser.find_element(By.ID, "search").is_displayed()
               and browser.find_element(By.ID, "sidebar").rect["x"] >= 0, message="the drawer")
    assert_accessible(browser, "phone width, drawer open")


# MARK: - Team mode

def test_sign_in_screen_with_an_error(browser, parley_team, request):
    request.node.allowed_console = ALLOWED
    start_signed_out(browser, parley_team)
    assert_accessible(browser, "sign-in screen")
    browser.find_element(By.ID, "signin-username").send_keys(TEAM_ADMIN[0])
    browser.find_element(By.ID, "signin-password").send_keys("not the password", Keys.ENTER)
    wait_until(lambda: browser.find_element(By.ID, "signin-error").text, message="the sign-in error")
    assert_accessible(browser, "sign-in screen with an error")


def test_user_menu_and_account_dialogs(browser, parley_team, request):
    request.node.allowed_console = ALLOWED
    admin = parley_team.sign_in(*TEAM_ADMIN)
    try:  # a second user, so that the Users table has a row with every action
        parley_team.api("POST", "/api/users", {"username": "axel", "password": "axel's password", "role": "member"},
                        headers={"Cookie": admin})
    except urllib.error.HTTPError as error:
        assert error.code == 409, error
    start_signed_out(browser, parley_team)
    sign_in(browser, *TEAM_ADMIN)

    browser.find_element(By.ID, "account-button").click()
    wait_until(lambda: shown(browser, "account-menu"), message="the user menu")
    assert_accessible(browser, "user menu open")
    browser.find_element(By.ID, "account-button").click()

    open_menu_item(browser, "Users")
    wait_until(lambda: browser.find_element(By.XPATH, "//tbody[@id='user-list']/tr[.//span[text()='axel']]"),
               message="the users listed")
    assert_accessible(browser, "users dialog")
    browser.find_element(By.CSS_SELECTOR, "#users-dialog button[data-close]").click()

    open_menu_item(browser, "API tokens")
    browser.find_element(By.ID, "token-name").send_keys("a11y script", Keys.ENTER)
    wait_until(lambda: browser.find_element(By.XPATH, "//tbody[@id='token-list']/tr[td[text()='a11y script']]")
               and shown(browser, "token-secret"), message="the new token, shown once and listed")
    assert_accessible(browser, "API tokens dialog")
    browser.find_element(By.CSS_SELECTOR, "#tokens-dialog button[data-close]").click()

    open_menu_item(browser, "Sessions")
    wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "#session-list tr.is-current"), message="the sessions")
    assert_accessible(browser, "sessions dialog")
    browser.find_element(By.CSS_SELECTOR, "#sessions-dialog button[data-close]").click()

    open_menu_item(browser, "Change password")
    browser.find_element(By.ID, "password-current").send_keys("a wrong one")
    browser.find_element(By.ID, "password-new").send_keys("a new password")
    browser.find_element(By.ID, "password-repeat").send_keys("a different one", Keys.ENTER)
    wait_until(lambda: browser.find_element(By.ID, "password-status").text, message="the mismatch said")
    assert_accessible(browser, "password dialog with an error")
