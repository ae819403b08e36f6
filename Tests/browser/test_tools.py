"""Tool calls on the page (issue 20), against a real Parley and the scripted fake upstream: the built-in
`parley/search_history` (approval `never`, no MCP server) called by the model, its card between the two
text parts with its streamed arguments and its result, the same after a reload (stored parts) and in the
middle of the call (the snapshot's parts), a stop while the call streams, the Tools list of the Chat
settings, and axe on the cards in both colour schemes."""
import json
import threading

from selenium.webdriver.common.by import By

from axe_check import assert_accessible
from conftest import last_assistant_id, open_page, screenshot, send_message, wait_idle, wait_until

TOOL = "parley/search_history"
FRAGMENTS = ['{"qu', 'ery": "sea', 'lion"}']

# The reply's body as segments, in order: each text (a streamed block, or a finished text part) and
# each card with its status, title, arguments, result text and whether its spinner shows.
SEGMENTS_JS = """
const el = document.querySelector(`#message-list .message[data-id="${arguments[0]}"]`);
if (!el) return null;
return [...el.querySelector('.message-blocks').children].map((node) => {
  if (!node.classList.contains('tool-card')) return {kind: 'text', text: node.textContent.trim()};
  const spinner = node.querySelector('.tool-spinner');
  const result = node.querySelector('.tool-card-result');
  return {kind: 'card', status: node.dataset.status, title: node.querySelector('.tool-card-title').textContent,
          label: node.getAttribute('aria-label'), arguments: node.querySelector('.tool-card-arguments-text').textContent,
          state: node.querySelector('.tool-card-status-text').textContent,
          spinning: getComputedStyle(spinner).display !== 'none',
          result: result.hidden ? null : result.textContent, elements: result.querySelectorAll('pre *').length,
          asking: !node.querySelector('.tool-card-approval').hidden};
});
"""


def segments(driver, message_id):
    return driver.execute_script(SEGMENTS_JS, message_id) or []


def kinds(driver, message_id):
    return [segment["kind"] for segment in segments(driver, message_id)]


def new_conversation(server, title="Tools", tools=(TOOL,)):
    created = server.api("POST", "/api/conversations", {"title": title, "model": "openai:fake", "tools": list(tools)})
    assert created["tools"] == list(tools), created
    return created["id"]


def script_search(upstream, gate=None):
    """The model's first answer: text, then a call of the search tool (its arguments in fragments, held
    by `gate` when given); its second (with the result): text."""
    upstream.mode = "ok"
    upstream.rounds = [
        {"text": ["Let me ", "look."], "calls": [("call_sea", "parley__search_history", FRAGMENTS)], "gate": gate},
        {"text": ["Found ", "*it*."]},
    ]


def assert_finished_reply(driver, answer_id, earlier_id):
    shown = segments(driver, answer_id)
    assert [segment["kind"] for segment in shown] == ["text", "card", "text"], shown
    first, card, last = shown
    assert first["text"] == "Let me look." and last["text"] == "Found it.", shown
    assert card["status"] == "complete" and card["state"] == "Done" and not card["spinning"], card
    assert card["title"] == "Search history" and card["label"] == "Tool call: Search history", card
    assert json.loads(card["arguments"]) == {"query": "sealion"}, card
    assert card["arguments"].startswith('{\n  "query"'), "pretty JSON once the arguments parse"
    assert earlier_id in card["result"] and "Structured content" in card["result"], card
    assert card["elements"] == 0, "a tool's output is text, never HTML"
    assert not card["asking"], card


def test_a_built_in_tool_call_shows_between_the_text_parts(browser, parley_fake, fake_upstream, artifacts):
    earlier = new_conversation(parley_fake, title="Sealion sightings", tools=())
    gate = threading.Event()
    script_search(fake_upstream, gate)
    try:
        conversation = new_conversation(parley_fake)
        open_page(browser, parley_fake.base, f"/#/c/{conversation}")
        send_message(browser, "Where did I see the sealion?")
        answer_id = last_assistant_id(browser)
        # The call has started, its arguments held back: a card after the first text, its spinner on.
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card"], message="the card after the first text")
        card = segments(browser, answer_id)[1]
        assert card["status"] == "streaming" and card["spinning"], card
        assert segments(browser, answer_id)[0]["text"] == "Let me look.", "the text before the call is closed"
        tail = browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{answer_id}'] .message-tail")
        assert not tail.is_displayed(), "no tail is left before the card"
        gate.set()
        wait_idle(browser)
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card", "text"], message="the answer after the card")
        assert_finished_reply(browser, answer_id, earlier)
        screenshot(browser, artifacts, "tools-finished")

        # After a reload the stored parts draw the same reply.
        browser.refresh()
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card", "text"], message="the reply after a reload")
        assert_finished_reply(browser, answer_id, earlier)
        assert_accessible(browser, "finished tool call")
    finally:
        gate.set()
        fake_upstream.rounds = []


def test_a_reload_in_the_middle_of_a_call_draws_it_from_the_snapshot(browser, parley_fake, fake_upstream):
    earlier = new_conversation(parley_fake, title="Sealion again", tools=())
    gate = threading.Event()
    script_search(fake_upstream, gate)
    try:
        conversation = new_conversation(parley_fake)
        open_page(browser, parley_fake.base, f"/#/c/{conversation}")
        send_message(browser, "Find the sealion")
        answer_id = last_assistant_id(browser)
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card"], message="the card")
        browser.refresh()
        # The snapshot's parts: the first text part's blocks, then the call, still streaming.
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card"], message="the card after a reload")
        shown = segments(browser, answer_id)
        assert shown[0]["text"] == "Let me look." and shown[1]["status"] == "streaming", shown
        gate.set()
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card", "text"], message="the rest after the card")
        wait_idle(browser)
        assert_finished_reply(browser, answer_id, earlier)
    finally:
        gate.set()
        fake_upstream.rounds = []


def test_stop_while_a_call_streams_shows_it_cancelled(browser, parley_fake, fake_upstream):
    gate = threading.Event()
    script_search(fake_upstream, gate)
    try:
        conversation = new_conversation(parley_fake)
        open_page(browser, parley_fake.base, f"/#/c/{conversation}")
        send_message(browser, "Search and be stopped")
        answer_id = last_assistant_id(browser)
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card"], message="the card")
        browser.find_element(By.ID, "stop").click()
        wait_idle(browser)
        wait_until(lambda: segments(browser, answer_id)[1]["status"] == "cancelled", message="the call cancelled")
        card = segments(browser, answer_id)[1]
        assert card["state"] == "Cancelled" and not card["spinning"], card
        browser.refresh()
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card"], message="the stopped reply after a reload")
        assert segments(browser, answer_id)[1]["status"] == "cancelled"
    finally:
        gate.set()
        fake_upstream.rounds = []


def test_the_tools_list_of_the_chat_settings(browser, parley_fake):
    conversation = new_conversation(parley_fake, tools=())
    open_page(browser, parley_fake.base, f"/#/c/{conversation}")
    browser.find_element(By.ID, "system-toggle").click()
    box = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, ".tools-picker .tool-pick-box"),
                     message="the tools listed")
    label = browser.find_element(By.CSS_SELECTOR, f"label[for='{box.get_attribute('id')}']")
    assert "Search history" in label.text and TOOL in label.text, label.text
    assert not box.is_selected()
    assert_accessible(browser, "tools list in the chat settings")
    box.click()
    browser.find_element(By.CSS_SELECTOR, "#system-form button[type='submit']").click()
    wait_until(lambda: browser.find_element(By.ID, "system-status").text == "Saved.", message="saved")
    assert parley_fake.api("GET", f"/api/conversations/{conversation}")["tools"] == [TOOL]
    # Read again when the dialog opens next: ticked.
    browser.find_element(By.ID, "system-cancel").click()
    browser.refresh()
    browser.find_element(By.ID, "system-toggle").click()
    wait_until(lambda: browser.find_element(By.CSS_SELECTOR, ".tools-picker .tool-pick-box").is_selected(),
               message="the saved tool ticked")
