"""Issue 18, items 2 and 3 on the page, at desktop and phone sizes: a user message is shown exactly as
typed (plain text, `textContent` equals `content`); a streaming answer's open tail is shown as the
server rendered it (`tail_html`), never as raw Markdown, and the committed block replaces it with a
height change of at most 4 px; the code frame opens as soon as the fence line is complete, and its
first line is not indented."""
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import (assert_shows_stored, last_assistant_id, open_page, screenshot, send_message, wait_idle,
                      wait_until)

SIZES = [pytest.param((1280, 800), id="desktop"), pytest.param((390, 844), id="phone")]

# Nine lines: indented Python, a blank line, `__init__`, `2*3*4`, backticks; Markdown would mangle each.
TYPED = ("  two leading spaces\n"
         "class Box:\n"
         "    def __init__(self):\n"
         "        self.size = 2*3*4\n"
         "\n"
         "Use `print` and ``` fences\n"
         "- not a list, *not italic*\n"
         "# not a heading\n"
         "__not bold__ _x_")

TYPED_JS = """
const box = document.querySelector("textarea[aria-label='Message']");
box.value = arguments[0];
box.dispatchEvent(new Event('input', {bubbles: true}));
"""


@pytest.mark.parametrize("size", SIZES)
def test_a_user_message_is_shown_exactly_as_typed(browser, parley_fast, artifacts, size):
    browser.set_window_size(*size)
    open_page(browser, parley_fast.base)
    browser.execute_script(TYPED_JS, TYPED)
    browser.find_element(By.CSS_SELECTOR, "textarea[aria-label='Message']").send_keys("\n")
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "#message-list .message.role-user"),
               message="the sent message")
    wait_idle(browser)
    check = """
    const el = document.querySelector('#message-list .message.role-user');
    const body = el.querySelector('.message-body');
    const shown = [...body.children].filter((n) => !n.hidden && n.textContent !== '');
    // The body's only shown child holds the text (the template's own whitespace aside).
    return {text: shown.length === 1 ? shown[0].textContent : shown.map((n) => n.outerHTML), elements: body.querySelectorAll('strong, em, code, ul, h1, pre code').length,
            whiteSpace: getComputedStyle(shown[shown.length - 1]).whiteSpace,
            lines: Math.round(shown[shown.length - 1].getBoundingClientRect().height
                              / parseFloat(getComputedStyle(shown[shown.length - 1]).lineHeight))};
    """
    shown = browser.execute_script(check)
    assert shown["text"] == TYPED, shown
    assert shown["elements"] == 0, "no Markdown markup in what was typed"
    assert shown["whiteSpace"] == "pre-wrap"
    assert shown["lines"] >= 9, f"nine typed lines show as nine: {shown}"
    # The same after a reload: the stored message has no html, only its content.
    browser.refresh()
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "#message-list .message.role-user"),
               message="the conversation again")
    assert browser.execute_script(check)["text"] == TYPED
    screenshot(browser, artifacts, f"typed-{size[0]}")


# Records, for every reply event the page handles, the streaming message's body before and after it:
# its height, the provisional HTML's text, the raw tail's visible text and the code view.
RECORDER_JS = """
const records = window.__tailRecords = [];
const native = EventSource.prototype.addEventListener;
const names = new Set(['snapshot', 'block', 'tail', 'tail_append', 'tail_html', 'done']);
const measure = () => {
  const list = document.querySelectorAll('#message-list .message.role-assistant');
  const el = list[list.length - 1];
  if (!el) return null;
  const body = el.querySelector('.message-body');
  const raw = el.querySelector('.message-tail');
  const html = el.querySelector('.message-tail-html');
  const code = el.querySelector('.message-tail-code');
  return {height: body.getBoundingClientRect().height,
          provisional: html && !html.hidden ? html.innerText : null,
          raw: raw.hidden ? '' : raw.textContent,
          code: code && !code.hidden ? code.querySelector('pre').textContent : null,
          codeLanguage: code && !code.hidden ? code.querySelector('.codeblock-language').textContent : null};
};
EventSource.prototype.addEventListener = function (type, listener, options) {
  if (!names.has(type)) return native.call(this, type, listener, options);
  return native.call(this, type, function (event) {
    const before = measure();
    try { return listener.call(this, event); } finally {
      records.push({name: type, data: event.data, before, after: measure()});
    }
  }, options);
};
"""

PROSE_CHUNKS = ["## Heading", " one", "\n", "\n",
                "Some **bo", "ld** text with `co", "de` and a [li", "nk](https://example.com/x).", "\n", "\n",
                "- first", "\n", "- sec", "ond item", "\n", "\n",
                "| a | b |", "\n", "|---|---|", "\n", "| 1 | 2 |", "\n", "\n",
                "> quoted", "\n", "\n",
                "2*3*4 and __in", "it__ end."]
RAW_MARKERS = ["**", "`", "[", "](", "|", "##", "__"]


def stream_recorded(browser, parley_fake, fake_upstream, chunks, size, delay=0.06):
    browser.set_window_size(*size)
    fake_upstream.mode = "ok"
    fake_upstream.answer = chunks
    fake_upstream.chunk_delay = delay
    open_page(browser, parley_fake.base)
    Select(browser.find_element(By.ID, "model")).select_by_value("openai:fake")
    browser.execute_script(RECORDER_JS)
    send_message(browser, "Show me Markdown")
    answer_id = last_assistant_id(browser)
    wait_idle(browser)
    return answer_id, browser.execute_script("return window.__tailRecords;")


def commits(records):
    """(before, after) of each commit: from the body before its first `block` to after the `tail_html`
    or `done` that ends the same batch (the provisional HTML it replaces is gone by then)."""
    found = []
    start = None
    for record in records:
        if record["name"] == "block" and start is None:
            start = record
        elif record["name"] in ("tail_html", "done") and start is not None:
            found.append((start, record))
            start = None
    return found


@pytest.mark.parametrize("size", SIZES)
def test_a_streaming_answer_shows_formatted_text_and_commits_without_a_jump(browser, parley_fake, fake_upstream,
                                                                            artifacts, size):
    try:
        answer_id, records = stream_recorded(browser, parley_fake, fake_upstream, PROSE_CHUNKS, size)
        names = [record["name"] for record in records]
        assert names.count("tail_html") >= 10, names
        shown = [record["after"] for record in records if record["after"] and record["name"] != "done"]
        for state in shown:
            assert state["raw"] == "", f"the raw tail is never shown: {state}"
            text = state["provisional"] or ""
            for marker in RAW_MARKERS:
                assert marker not in text, f"raw {marker!r} shown while streaming: {text!r}"
            assert not text.startswith("\n"), "no leading blank line"
        seen = " ".join(state["provisional"] or "" for state in shown)
        for words in ["Heading", "bold text with code and a link.", "second item", "quoted"]:
            assert words in seen, f"{words!r} was shown while it streamed: {seen!r}"
        found = commits(records)
        assert len(found) >= 5, names
        jumps = [(round(after["after"]["height"] - before["before"]["height"], 1), before["data"][:60])
                 for before, after in found]
        print(f"[commit] {size}: height change at each commit {jumps}")
        assert all(abs(change) <= 4 for change, _ in jumps), jumps
        assert_shows_stored(browser, parley_fake, answer_id)
        screenshot(browser, artifacts, f"tail-html-{size[0]}")
    finally:
        fake_upstream.reset()


CODE_CHUNKS = ["Here:\n\n", "```py", "thon\n", "x = 1\n", "print(x)\n", "```\n", "\nDone."]


@pytest.mark.parametrize("size", SIZES)
def test_the_code_frame_opens_once_the_fence_line_is_complete(browser, parley_fake, fake_upstream, size):
    try:
        answer_id, records = stream_recorded(browser, parley_fake, fake_upstream, CODE_CHUNKS, size)
        states = [record["after"] for record in records if record["after"] and record["name"] != "done"]
        for state in states:
            assert "```" not in state["raw"] and "```" not in (state["provisional"] or ""), \
                f"a raw fence opener is never shown: {state}"
        opened = [state for state in states if state["code"] is not None]
        assert opened, "the code frame showed while the fence was open"
        assert opened[0]["codeLanguage"] == "python"
        with_lines = [state for state in opened if state["code"]]
        assert with_lines and with_lines[0]["code"].startswith("x = 1\n"), \
            f"the first streamed line is not indented: {with_lines[:1]}"
        assert_shows_stored(browser, parley_fake, answer_id)
    finally:
        fake_upstream.reset()
