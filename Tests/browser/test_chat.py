"""The chat page in a real browser against a real Parley: streaming, stop, regenerate, branches,
continue, edit, reload mid-answer, inline errors."""
import os
import shutil
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from cut_proxy import CutProxy
from conftest import (ROOT, after_frames, assert_shows_stored, last_assistant_id, messages, open_page, screenshot,
                      send_message, wait_idle, wait_until)


def message_element(driver, message_id):
    return driver.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{message_id}']")


def button_in(element, name):
    """A button by its accessible name (aria-label or visible text) inside one message."""
    for button in element.find_elements(By.CSS_SELECTOR, "button"):
        label = button.get_attribute("aria-label") or button.get_attribute("textContent").strip()
        if label == name:
            return button
    raise AssertionError(f"no button named {name!r} in the message")


def branch_text(element):
    return element.find_element(By.CSS_SELECTOR, ".branch-position").text


def test_send_shows_streamed_markdown_as_elements(browser, parley_fast, artifacts):
    open_page(browser, parley_fast.base)
    send_message(browser, "Show me some Markdown please")
    answer_id = last_assistant_id(browser)
    wait_idle(browser)
    answer = message_element(browser, answer_id)
    for selector in ("h1, h2", "ul", "ol", "table", "pre > code"):
        assert answer.find_elements(By.CSS_SELECTOR, f".message-body {selector}"), selector
    assert "#/c/" in browser.current_url
    language = answer.find_element(By.CSS_SELECTOR, ".codeblock-language").text
    assert language == "swift"
    assert answer.find_elements(By.CSS_SELECTOR, "button[aria-label='Copy swift code']")
    assert button_in(answer, "Copy") and button_in(answer, "Regenerate")
    assert_shows_stored(browser, parley_fast, answer_id)
    # The conversation is in the URL and in the sidebar, newest first (the sidebar may still be
    # catching up with the new conversation).
    wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "#conversation-list li a").get_attribute("aria-current")
               == "page", message="the new conversation first in the sidebar")
    assert browser.execute_script("return document.querySelectorAll('[style]').length") == 0
    shot = screenshot(browser, artifacts, "answer-light")
    if os.environ.get("UPDATE_SCREENSHOT") == "1":  # refreshes the committed docs/screenshot.png
        shutil.copy(shot, ROOT / "docs" / "screenshot.png")


COUNT_POSTS_JS = """
const real = window.fetch.bind(window);
window.__posts = [];
window.fetch = (url, init) => {
  if (init && init.method === 'POST') window.__posts.push(String(url));
  return real(url, init);
};
"""


def test_a_new_chats_first_send_is_one_request(browser, parley_fast):
    """The first send makes the conversation and its first message in one POST (issue 23); the next
    send posts the message alone."""
    open_page(browser, parley_fast.base)
    browser.execute_script(COUNT_POSTS_JS)
    send_message(browser, "Hello in one request")
    first_answer = last_assistant_id(browser)
    wait_idle(browser)
    assert browser.execute_script("return window.__posts") == ["/api/conversations"]
    assert "#/c/" in browser.current_url
    cid = browser.current_url.split("#/c/")[1]
    wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "#conversation-list li a").get_attribute("aria-current")
               == "page", message="the new conversation first in the sidebar")
    assert_shows_stored(browser, parley_fast, first_answer)

    send_message(browser, "And a second one")
    wait_idle(browser)
    assert browser.execute_script("return window.__posts") == ["/api/conversations",
                                                              f"/api/conversations/{cid}/messages"]
    stored = parley_fast.api("GET", f"/api/conversations/{cid}")
    assert [m["role"] for m in stored["messages"]] == ["user", "assistant", "user", "assistant"]
    assert stored["messages"][0]["content"] == "Hello in one request"
    # (The server is shared with other tests: only this conversation's row is checked.)
    listed = [c["id"] for c in parley_fast.api("GET", "/api/conversations?limit=200")["items"]]
    assert listed.count(cid) == 1
    assert len(messages(browser, "user")) == 2


def test_stop_shows_exactly_the_stored_content(browser, parley_slow, artifacts):
    open_page(browser, parley_slow.base)
    send_message(browser, "Stop me early")
    answer_id = last_assistant_id(browser)
    answer = message_element(browser, answer_id)
    wait_until(lambda: len(answer.text) > 80, message="some streamed text")
    stop = browser.find_element(By.CSS_SELECTOR, "#stop")
    assert stop.is_displayed() and stop.text == "Stop"
    stop.click()
    wait_idle(browser)
    stored = assert_shows_stored(browser, parley_slow, answer_id)
    assert stored["status"] == "stopped"
    assert answer.get_attribute("data-status") == "stopped"
    assert answer.find_element(By.CSS_SELECTOR, ".message-status").text == "Stopped"
    assert button_in(answer, "Continue").is_enabled()
    screenshot(browser, artifacts, "stopped")


def test_escape_stops_and_continue_completes_the_answer(browser, parley_slow, artifacts):
    open_page(browser, parley_slow.base)
    send_message(browser, "Continue me later")
    answer_id = last_assistant_id(browser)
    answer = message_element(browser, answer_id)
    wait_until(lambda: len(answer.text) > 80, message="some streamed text")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    wait_idle(browser)
    stopped = parley_slow.api("GET", f"/api/messages/{answer_id}")
    assert stopped["status"] == "stopped"
    button_in(answer, "Continue").click()
    wait_until(lambda: answer.get_attribute("data-status") == "streaming", timeout=15, message="streaming again")
    wait_idle(browser, timeout=30)
    final = assert_shows_stored(browser, parley_slow, answer_id)
    assert final["status"] == "complete"
    assert final["content"].startswith(stopped["content"])
    assert final["content"].count("## Demo answer") == 1
    assert not button_in(answer, "Continue").is_displayed()


def test_regenerate_then_switch_branches(browser, parley_fast, artifacts):
    open_page(browser, parley_fast.base)
    send_message(browser, "Answer twice")
    first_id = last_assistant_id(browser)
    wait_idle(browser)
    button_in(message_element(browser, first_id), "Regenerate").click()
    second_id = wait_until(lambda: (lambda i: i if i != first_id else None)(last_assistant_id(browser)),
                           message="a new answer")
    wait_idle(browser)
    assert len(messages(browser, "assistant")) == 1, "only the current sibling is shown"
    second = message_element(browser, second_id)
    assert branch_text(second) == "2 / 2"
    assert_shows_stored(browser, parley_fast, second_id)
    button_in(second, "Previous version").click()
    wait_until(lambda: last_assistant_id(browser) == first_id, message="the first version")
    assert branch_text(message_element(browser, first_id)) == "1 / 2"
    screenshot(browser, artifacts, "branch-1-of-2")
    button_in(message_element(browser, first_id), "Next version").click()
    wait_until(lambda: last_assistant_id(browser) == second_id, message="the second version")
    assert branch_text(message_element(browser, second_id)) == "2 / 2"
    assert len(messages(browser, "assistant")) == 1


def test_edit_creates_a_branch(browser, parley_fast):
    open_page(browser, parley_fast.base)
    send_message(browser, "Original question")
    wait_idle(browser)
    user = messages(browser, "user")[0]
    button_in(user, "Edit").click()
    area = user.find_element(By.CSS_SELECTOR, "textarea[aria-label='Edit message']")
    area.clear()
    area.send_keys("Edited question")
    area.send_keys(Keys.ENTER)
    wait_until(lambda: "Edited question" in messages(browser, "user")[0].text, message="the edited message")
    wait_idle(browser)
    edited = messages(browser, "user")[0]
    assert branch_text(edited) == "2 / 2"
    assert len(messages(browser, "assistant")) == 1
    answer_id = last_assistant_id(browser)
    assert "Edited question" in message_element(browser, answer_id).text
    assert_shows_stored(browser, parley_fast, answer_id)
    button_in(edited, "Previous version").click()
    wait_until(lambda: "Original question" in messages(browser, "user")[0].text, message="the original branch")
    assert branch_text(messages(browser, "user")[0]) == "1 / 2"


def test_reload_mid_answer_shows_it_whole_without_duplicates(browser, parley_slower, artifacts):
    parley_slow = parley_slower  # the reload must surely come before the end of the answer
    open_page(browser, parley_slow.base)
    send_message(browser, "Survive a reload")
    answer_id = last_assistant_id(browser)
    wait_until(lambda: len(message_element(browser, answer_id).text) > 60, message="some streamed text")
    url = browser.current_url
    browser.refresh()
    wait_until(lambda: browser.execute_script(
        "return !!document.querySelector(`#message-list .message[data-id='${arguments[0]}'].is-streaming`)",
        answer_id), timeout=10, message="the page to reattach to the running answer")
    # A second tab on the same conversation follows the same stream.
    first_tab = browser.current_window_handle
    browser.switch_to.new_window("tab")
    browser.get(url)
    # Idle means nothing streams: true at once on a page that has not loaded the conversation yet.
    wait_until(lambda: browser.execute_script(
        "return !!document.querySelector(`#message-list .message[data-id='${arguments[0]}']`)", answer_id),
        message="the second tab to show the answer")
    wait_idle(browser)
    assert_shows_stored(browser, parley_slow, answer_id)
    browser.switch_to.window(first_tab)
    wait_idle(browser)
    stored = assert_shows_stored(browser, parley_slow, answer_id)
    assert stored["status"] == "complete"
    assert stored["content"].count("## Demo answer") == 1
    screenshot(browser, artifacts, "after-reload")


def test_upstream_failure_is_shown_inline_with_retry(browser, parley_fake, fake_upstream, artifacts):
    fake_upstream.mode = "fail"
    open_page(browser, parley_fake.base)
    Select(browser.find_element(By.ID, "model")).select_by_value("openai:fake")
    send_message(browser, "This will fail")
    answer_id = last_assistant_id(browser)
    answer = message_element(browser, answer_id)
    error = wait_until(lambda: (lambda e: e if e.is_displayed() else None)(
        answer.find_element(By.CSS_SELECTOR, ".message-error")), message="the inline error")
    assert error.find_element(By.CSS_SELECTOR, ".message-error-text").text
    wait_idle(browser)
    assert answer.get_attribute("data-status") == "failed"
    assert answer.find_element(By.CSS_SELECTOR, ".message-status").text == "Failed"
    screenshot(browser, artifacts, "upstream-error")
    fake_upstream.mode = "ok"
    button_in(answer, "Retry").click()
    retried = wait_until(lambda: (lambda i: i if i != answer_id else None)(last_assistant_id(browser)),
                         message="the retried answer")
    wait_idle(browser)
    element = message_element(browser, retried)
    assert element.find_elements(By.CSS_SELECTOR, ".message-body h1")
    assert "recovered" in element.text
    assert_shows_stored(browser, parley_fake, retried)


EVENTSOURCE_COUNTER_JS = """
(() => {
  const Native = window.EventSource;
  window.__eventSources = { open: 0, max: 0, created: 0 };
  class Counted extends Native {
    constructor(...args) {
      super(...args);
      const stats = window.__eventSources;
      stats.created += 1; stats.open += 1; stats.max = Math.max(stats.max, stats.open);
      this.__counted = true;
    }
    close() {
      if (this.__counted) { this.__counted = false; window.__eventSources.open -= 1; }
      super.close();
    }
  }
  window.EventSource = Counted;
})();
"""


def test_one_event_source_per_tab_whatever_it_follows(browser, parley_fast):
    # The tab's one connection (GET /api/events) carries its notifications and whatever answer it
    # follows: following another answer replaces it, never adds one, and it stays open after `done`.
    script = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": EVENTSOURCE_COUNTER_JS})
    try:
        open_page(browser, parley_fast.base)
        send_message(browser, "Count the connections")
        first_id = last_assistant_id(browser)
        wait_idle(browser)
        button_in(message_element(browser, first_id), "Regenerate").click()
        wait_until(lambda: last_assistant_id(browser) != first_id, message="the regenerated answer")
        wait_idle(browser)
        send_message(browser, "And once more")
        wait_idle(browser)
        stats = browser.execute_script("return window.__eventSources")
        assert stats["created"] >= 3, stats
        assert stats["max"] == 1, stats
        assert stats["open"] == 1, stats
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})


# Watches the message view from the wheel's scroll up: `movedDown` once it went down again after
# reaching the top, `grownAfter` counts the list's size changes once the wheel's scroll has ended
# (Public/chat/scroller.js counts scroll events as the person's for INTENT_MS + SCROLL_TAIL_MS after the wheel,
# and for SCROLL_TAIL_MS after each such event: it is over after a quiet WHEEL_OVER_MS).
WHEEL_OVER_MS = 1000
WATCH_HELD_JS = """
const box = document.getElementById('messages');
const held = window.__held = {top: false, movedDown: false, lastScroll: performance.now(), grownAfter: 0};
box.addEventListener('scroll', () => {
  held.lastScroll = performance.now();
  if (box.scrollTop === 0) held.top = true;
  else if (held.top) held.movedDown = true;
}, {passive: true});
new ResizeObserver(() => {
  if (held.top && performance.now() - held.lastScroll > %d) held.grownAfter += 1;
}).observe(document.getElementById('message-list'));
""" % WHEEL_OVER_MS


def test_streaming_inserts_blocks_once_and_respects_scrolling_up(browser, parley_slower, artifacts):
    # Everything up to the announcer check happens while the answer streams: at 60 tokens per second
    # a loaded machine could reach it after the end.
    parley_slow = parley_slower
    browser.set_window_size(1280, 600)
    open_page(browser, parley_slow.base)
    send_message(browser, "Watch the blocks")
    answer_id = last_assistant_id(browser)
    selector = f"#message-list .message[data-id='{answer_id}'] .message-blocks > .block"
    wait_until(lambda: browser.execute_script(
        f"const b = document.querySelector(\"{selector}\"); if (b) b.probe = 'kept'; return !!b;"),
        message="the first committed block")
    # The open tail shows under the blocks while the answer streams, as the server rendered it
    # (`tail_html`, issue 18), never as raw Markdown.
    wait_until(lambda: browser.execute_script(
        f"const el = document.querySelector(\"#message-list .message[data-id='{answer_id}']\");"
        "const t = el.querySelector('.message-tail-html');"
        "return el.querySelector('.message-tail').hidden && !!t && t.textContent.length > 0;"),
        message="a rendered tail")
    # Once the answer is taller than the view, scrolling up is respected (no jump back down).
    box = "document.getElementById('messages')"
    wait_until(lambda: browser.execute_script(f"return {box}.scrollHeight > {box}.clientHeight + 200"),
               message="an answer taller than the view")
    assert browser.execute_script(f"const b = {box}; return b.scrollHeight - b.scrollTop - b.clientHeight") < 60, \
        "pinned to the bottom while streaming"
    # The person's own scroll (the wheel) stops the following; a script's or the layout's would not.
    browser.execute_script(WATCH_HELD_JS)
    ActionChains(browser).scroll_from_origin(
        ScrollOrigin.from_element(browser.find_element(By.ID, "messages")), 0, -100000).perform()
    wait_until(lambda: browser.execute_script(f"return {box}.scrollTop") == 0, timeout=3, message="scrolled to the top")
    # The view stays up while the answer grows: the proof is growth that came after the wheel's scroll
    # had ended, followed by two frames (a pinned view follows growth in that frame or the next).
    wait_until(lambda: browser.execute_script("return window.__held.grownAfter") >= 2, timeout=30,
               message="the answer growing after the wheel's scroll ended")
    after_frames(browser)
    assert browser.execute_script("return window.__held.movedDown") is False, "the view jumped back down"
    assert browser.execute_script(f"return {box}.scrollTop") == 0
    assert browser.find_element(By.ID, "jump-latest").is_displayed()
    assert browser.find_element(By.ID, "announcer").text == "The assistant is answering."
    screenshot(browser, artifacts, "streaming-scrolled-up")
    wait_idle(browser, timeout=60)
    assert browser.execute_script(f"return document.querySelector(\"{selector}\").probe") == "kept", \
        "a committed block was re-rendered"
    assert browser.find_element(By.ID, "announcer").text == "The answer is complete."
    assert browser.find_element(By.ID, "messages").get_attribute("aria-live") is None
    assert_shows_stored(browser, parley_slow, answer_id)


def test_copy_buttons_copy_markdown_source_and_code(browser, parley_fast):
    browser.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": parley_fast.base, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    open_page(browser, parley_fast.base)
    send_message(browser, "Copy this")
    answer_id = last_assistant_id(browser)
    wait_idle(browser)
    answer = message_element(browser, answer_id)
    read_clipboard = "navigator.clipboard.readText().then(arguments[0], (e) => arguments[0]('ERR ' + e))"
    button_in(answer, "Copy").click()
    stored = parley_fast.api("GET", f"/api/messages/{answer_id}")
    wait_until(lambda: browser.execute_async_script(read_clipboard) == stored["content"], message="message copied")
    answer.find_element(By.CSS_SELECTOR, "button[aria-label='Copy swift code']").click()
    wait_until(lambda: browser.execute_async_script(read_clipboard).strip() ==
               'let greeting = "Hello, Parley"\nprint(greeting)', message="code copied")


def test_model_and_system_prompt_are_saved_per_conversation(browser, parley_fake, fake_upstream):
    fake_upstream.mode = "ok"
    open_page(browser, parley_fake.base)
    send_message(browser, "Settings please")
    wait_idle(browser)
    conversation_id = browser.current_url.split("#/c/")[1]
    Select(browser.find_element(By.ID, "model")).select_by_value("openai:fake")
    wait_until(lambda: parley_fake.api("GET", f"/api/conversations/{conversation_id}")["model"] == "openai:fake",
               message="the model stored")
    toggle = browser.find_element(By.ID, "system-toggle")
    toggle.click()
    assert browser.find_element(By.ID, "settings-dialog").get_attribute("open")
    prompt = browser.find_element(By.ID, "system-prompt")
    prompt.send_keys("Answer like a pirate.")
    browser.find_element(By.CSS_SELECTOR, "#system-form button[type='submit']").click()
    wait_until(lambda: parley_fake.api("GET", f"/api/conversations/{conversation_id}")["system_prompt"]
               == "Answer like a pirate.", message="the system prompt stored")
    browser.refresh()
    wait_until(lambda: Select(browser.find_element(By.ID, "model")).first_selected_option.get_attribute("value")
               == "openai:fake", message="the model shown after reload")
    browser.find_element(By.ID, "system-toggle").click()
    assert browser.find_element(By.ID, "system-prompt").get_attribute("value") == "Answer like a pirate."


def test_network_loss_mid_answer_resumes_without_gap(browser, parley_slow, request):
    # The browser itself reports the dropped and refused stream connections.
    request.node.allowed_console = ["/stream", "/api/events", "ERR_CONNECTION", "ERR_EMPTY_RESPONSE"]
    proxy = CutProxy(int(parley_slow.base.rsplit(":", 1)[1]))
    try:
        open_page(browser, proxy.base)
        send_message(browser, "Lose the network")
        answer_id = last_assistant_id(browser)
        answer = message_element(browser, answer_id)
        wait_until(lambda: len(answer.text) > 60, message="some streamed text")
        proxy.cut()
        wait_until(lambda: answer.find_element(By.CSS_SELECTOR, ".message-status").text
                   in ("Reconnecting…", "Disconnected"), timeout=10, message="the lost connection shown")
        time.sleep(1.0)
        proxy.restore()
        if answer.find_elements(By.CSS_SELECTOR, ".message-error:not([hidden]) button"):
            button_in(answer, "Retry").click()
        wait_idle(browser, timeout=40)
        stored = assert_shows_stored(browser, parley_slow, answer_id)
        assert stored["status"] == "complete"
    finally:
        proxy.close()


def test_rate_limit_is_shown_inline_then_retry_and_continue_a_truncated_answer(browser, parley_limited, request):
    request.node.allowed_console = ["status of 429"]
    open_page(browser, parley_limited.base)
    busy = parley_limited.api("POST", "/api/conversations", {"title": "Busy elsewhere"})
    running = parley_limited.api("POST", f"/api/conversations/{busy['id']}/messages", {"content": "Keep busy"})
    box = browser.find_element(By.CSS_SELECTOR, "textarea[aria-label='Message']")
    box.send_keys("Am I rate limited?", Keys.ENTER)
    failed = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "#message-list .message.role-user"),
                        message="the unsent message")
    error = wait_until(lambda: (lambda e: e if e.is_displayed() else None)(
        failed.find_element(By.CSS_SELECTOR, ".message-error")), message="the inline rate-limit error")
    assert "rate limited" in error.text
    parley_limited.api("POST", f"/api/messages/{running['assistant_message']['id']}/stop")
    button_in(failed, "Retry").click()
    answer_id = last_assistant_id(browser)
    wait_idle(browser, timeout=30)
    assert len(messages(browser, "user")) == 1
    stored = parley_limited.api("GET", f"/api/messages/{answer_id}")
    assert stored["finish_reason"] == "length", stored
    answer = message_element(browser, answer_id)
    assert answer.find_element(By.CSS_SELECTOR, ".message-status").text == "Truncated"
    button_in(answer, "Continue").click()
    wait_until(lambda: answer.get_attribute("data-status") == "streaming", timeout=15, message="streaming again")
    wait_idle(browser, timeout=30)
    final = assert_shows_stored(browser, parley_limited, answer_id)
    # PARLEY_MAX_REPLY_BYTES caps each run (the first, then each continue), and the demo answer is
    # longer than one run: the continue must add text after what was there, never replace it.
    assert final["content"].startswith(stored["content"]), (stored["content"], final["content"])
    assert len(final["content"].encode()) > len(stored["content"].encode()), \
        ("continue added nothing", stored["content"], final["content"])
    assert final["status"] == "complete", final
