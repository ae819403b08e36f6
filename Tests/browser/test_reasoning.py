"""A reasoning model's thinking on the page: streamed into an open box above the answer, collapsed
once the answer starts, kept (collapsed) after a reload, plain text only, never copied with the answer."""
import threading

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from conftest import (assert_shows_stored, last_assistant_id, open_page, screenshot, send_message, wait_idle,
                      wait_until)
from fake_upstream import REASONING_CHUNKS

REASONING = "".join(REASONING_CHUNKS)

# What one message shows of its reasoning: every box in it (there must be at most one), whether it is
# open, its summary, its text, whether it stands above the answer, and whether the answer has text.
REASONING_JS = """
const el = document.querySelector(`#message-list .message[data-id="${arguments[0]}"]`);
if (!el) return null;
const boxes = el.querySelectorAll('details.reasoning');
const body = el.querySelector('.message-body');
const answered = body.querySelector('.message-blocks').childElementCount > 0 ||
  !body.querySelector('.message-tail').hidden;
if (boxes.length === 0) return {count: 0, answered};
const box = boxes[0];
const text = box.querySelector('.reasoning-text');
return {count: boxes.length, open: box.open, summary: box.querySelector('summary').textContent,
        text: text.textContent, elements: text.querySelectorAll('*').length, answered,
        above: !!(box.compareDocumentPosition(body) & Node.DOCUMENT_POSITION_FOLLOWING),
        font: parseFloat(getComputedStyle(text).fontSize), bodyFont: parseFloat(getComputedStyle(body).fontSize),
        maxHeight: getComputedStyle(text).maxHeight, overflow: getComputedStyle(text).overflowY,
        whiteSpace: getComputedStyle(text).whiteSpace};
"""


def reasoning_of(driver, message_id):
    return driver.execute_script(REASONING_JS, message_id)


def summary_of(driver, message_id):
    return driver.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{message_id}'] details.reasoning > summary")


def start_thinking(driver, base, text):
    """Sends `text` to the fake reasoning model held between its reasoning and its answer; returns the
    answer's id once the whole reasoning is on the page."""
    open_page(driver, base)
    Select(driver.find_element(By.ID, "model")).select_by_value("openai:fake")
    send_message(driver, text)
    answer_id = last_assistant_id(driver)
    wait_until(lambda: (reasoning_of(driver, answer_id) or {}).get("text") == REASONING, message="the reasoning streamed")
    return answer_id


def test_reasoning_streams_open_then_collapses_and_stays_after_reload(browser, parley_fake, fake_upstream, artifacts):
    browser.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": parley_fake.base, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    gate = threading.Event()
    fake_upstream.mode = "reasoning"
    fake_upstream.reasoning_gate = gate
    try:
        answer_id = start_thinking(browser, parley_fake.base, "Think first")
        thinking = reasoning_of(browser, answer_id)
        assert thinking["count"] == 1 and thinking["open"], thinking
        assert thinking["summary"] == "Thinking…", thinking
        assert not thinking["answered"], thinking
        assert thinking["above"], "the reasoning stands above the answer"
        assert thinking["elements"] == 0, "reasoning is plain text, never HTML"
        assert thinking["whiteSpace"] == "pre-wrap" and thinking["overflow"] == "auto", thinking
        assert thinking["maxHeight"] != "none" and thinking["font"] < thinking["bodyFont"], thinking
        assert browser.find_element(By.ID, "announcer").text == "The assistant is answering.", \
            "the live region does not read the reasoning"
        screenshot(browser, artifacts, "reasoning-thinking")
        gate.set()
        wait_idle(browser)

        done = reasoning_of(browser, answer_id)
        assert done["count"] == 1 and done["text"] == REASONING and done["elements"] == 0, done
        assert not done["open"], "the box closes once the answer is there"
        assert done["summary"] == "Thought process", done
        answer = browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{answer_id}']")
        assert answer.find_elements(By.CSS_SELECTOR, ".message-body h1")
        assert "recovered" in answer.find_element(By.CSS_SELECTOR, ".message-body").text
        stored = assert_shows_stored(browser, parley_fake, answer_id)
        assert stored["reasoning"] == REASONING, stored
        assert "Let me think" not in stored["content"], stored

        # Copy takes the answer's Markdown only.
        answer.find_element(By.CSS_SELECTOR, "button[data-action='copy']").click()
        read_clipboard = "navigator.clipboard.readText().then(arguments[0], (e) => arguments[0]('ERR ' + e))"
        wait_until(lambda: browser.execute_async_script(read_clipboard) == stored["content"], message="answer copied")

        # An answer without reasoning has no box at all.
        fake_upstream.mode = "ok"
        send_message(browser, "No thinking this time")
        plain_id = wait_until(lambda: (lambda i: i if i != answer_id else None)(last_assistant_id(browser)),
                              message="the second answer")
        wait_idle(browser)
        assert "recovered" in browser.find_element(
            By.CSS_SELECTOR, f"#message-list .message[data-id='{plain_id}'] .message-body").text
        assert reasoning_of(browser, plain_id)["count"] == 0

        # From history: still there, collapsed; still none on the plain answer.
        browser.refresh()
        wait_until(lambda: reasoning_of(browser, plain_id) is not None, message="the conversation reloaded")
        loaded = reasoning_of(browser, answer_id)
        assert loaded["count"] == 1 and loaded["text"] == REASONING and loaded["elements"] == 0, loaded
        assert not loaded["open"] and loaded["summary"] == "Thought process", loaded
        assert reasoning_of(browser, plain_id)["count"] == 0
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        summary_of(browser, answer_id).click()
        assert reasoning_of(browser, answer_id)["open"]
        screenshot(browser, artifacts, "reasoning-dark")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        gate.set()
        fake_upstream.reasoning_gate = None
        fake_upstream.mode = "ok"


def test_reasoning_opened_by_hand_stays_open_when_the_answer_starts(browser, parley_fake, fake_upstream):
    gate = threading.Event()
    fake_upstream.mode = "reasoning"
    fake_upstream.reasoning_gate = gate
    try:
        answer_id = start_thinking(browser, parley_fake.base, "Think while I watch")
        assert reasoning_of(browser, answer_id)["open"]
        summary = summary_of(browser, answer_id)
        summary.click()
        wait_until(lambda: not reasoning_of(browser, answer_id)["open"], message="closed by a click")
        # Reopened from the keyboard: the summary is focusable and Enter toggles it.
        summary.send_keys(Keys.ENTER)
        wait_until(lambda: reasoning_of(browser, answer_id)["open"], message="reopened with Enter")
        gate.set()
        wait_idle(browser)
        done = reasoning_of(browser, answer_id)
        assert done["answered"] and done["open"], "a box set by hand stays as the person left it"
        assert done["summary"] == "Thought process", done
    finally:
        gate.set()
        fake_upstream.reasoning_gate = None
        fake_upstream.mode = "ok"
