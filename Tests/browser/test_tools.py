"""Tool calls on the page (issue 20), against a real Parley and the scripted fake upstream: the built-in
`parley/search_history` (approval `never`, no MCP server) called by the model, its card between the two
text parts with its streamed arguments and its result, the same after a reload (stored parts) and in the
middle of the call (the snapshot's parts), a stop while the call streams, the Tools list of the Chat
settings; and calls that ask first (the MCP test server, approval "always"): Approve with "Always allow
this tool", Deny after a reload while waiting, the reply resuming after the last decision, a result's
image; axe on the cards in both colour schemes."""
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from axe_check import assert_accessible
from conftest import last_assistant_id, open_page, screenshot, send_message, start_parley, wait_idle, wait_until
from parley_process import ROOT

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
    # The search tool's box (the built-in parley/render_ui is listed too).
    def search_pick():
        label = next(label for label in browser.find_elements(By.CSS_SELECTOR, ".tools-picker label") if TOOL in label.text)
        return label, browser.find_element(By.ID, label.get_attribute("for"))

    label, box = wait_until(search_pick, message="the tools listed")
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
    wait_until(lambda: search_pick()[1].is_selected(), message="the saved tool ticked")


# MARK: - Calls that ask first: an MCP server (Tests/mcp/test_server.py over stdio) with approval "always"

MCP_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "test_server.py"


def mcp_python():
    """The interpreter with the official MCP SDK (`make test` makes .build/mcp-venv and names it in
    PARLEY_MCP_PYTHON), or None."""
    python = os.environ.get("PARLEY_MCP_PYTHON") or str(ROOT / ".build" / "mcp-venv" / "bin" / "python")
    if not Path(python).exists() or subprocess.run([python, "-c", "import mcp"], capture_output=True).returncode != 0:
        return None
    return python


@pytest.fixture(scope="module")
def parley_mcp(artifacts, fake_upstream):
    python = mcp_python()
    if python is None:
        pytest.fail("no Python with the MCP SDK (make test makes .build/mcp-venv; or set PARLEY_MCP_PYTHON)")
    config = artifacts / "mcp-browser.json"
    config.write_text(json.dumps({"mcpServers": {"test": {
        "command": python, "args": [str(MCP_SERVER), "--stdio"], "approval": "always"}}}))
    server = start_parley("mcp", {"PARLEY_OPENAI_BASE_URL": fake_upstream.base_url, "PARLEY_OPENAI_MODELS": "fake",
                                  "PARLEY_MCP_CONFIG": str(config)})
    wait_until(lambda: any(tool["id"] == "test/lookup" and tool["available"]
                           for tool in server.api("GET", "/api/tools")["items"]), message="the MCP server's tools")
    yield server
    server.stop()


def script_approvals(upstream):
    """The model's first answer: text, then two calls that ask (lookup, image); its second: text."""
    upstream.mode = "ok"
    upstream.rounds = [
        {"text": ["I will ", "look it up."], "calls": [("call_l", "test__lookup", ['{"key":', ' "k1"}']),
                                                      ("call_i", "test__image", ["{}"])]},
        {"text": ["All ", "done."]},
    ]


def card(driver, message_id, tool):
    return next(segment for segment in segments(driver, message_id) if segment["kind"] == "card" and tool in segment["title"])


def card_button(driver, message_id, call_title, action):
    cards = driver.find_elements(By.CSS_SELECTOR, f"#message-list .message[data-id='{message_id}'] .tool-card")
    found = next(item for item in cards if call_title in item.find_element(By.CSS_SELECTOR, ".tool-card-title").text)
    return found.find_element(By.CSS_SELECTOR, f"[data-action='{action}']"), found


def start_asking(driver, server, upstream, text):
    """Sends `text` in a conversation with the test server's tools; returns the answer's id once both
    calls wait for a decision."""
    script_approvals(upstream)
    # A title of its own: a conversation still "New conversation" when its first run ends (here, paused)
    # would be named by one more request to the model, which would take the scripted second round.
    conversation = server.api("POST", "/api/conversations", {"title": "Approvals", "model": "openai:fake",
                                                             "tools": ["test/*"]})["id"]
    open_page(driver, server.base, f"/#/c/{conversation}")
    send_message(driver, text)
    answer_id = last_assistant_id(driver)
    wait_until(lambda: [segment.get("asking", False) for segment in segments(driver, answer_id)] == [False, True, True],
               message="two calls waiting for a decision")
    wait_idle(driver)
    return answer_id


def test_approve_each_call_and_the_reply_resumes(browser, parley_mcp, fake_upstream, artifacts):
    try:
        answer_id = start_asking(browser, parley_mcp, fake_upstream, "Look up k1 and show the image")
        el = browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{answer_id}']")
        assert el.get_attribute("data-status") == "awaiting_approval"
        assert el.find_element(By.CSS_SELECTOR, ".message-status").text == "Waiting for approval"
        lookup = card(browser, answer_id, "lookup")
        assert lookup["state"] == "Waiting for your approval" and json.loads(lookup["arguments"]) == {"key": "k1"}, lookup
        approve, lookup_card = card_button(browser, answer_id, "lookup", "tool-approve")
        assert approve.accessible_name.startswith("Approve"), approve.accessible_name
        screenshot(browser, artifacts, "tools-awaiting-approval")
        assert_accessible(browser, "tool calls awaiting approval")

        # Keyboard: "Always allow this tool", then Approve; the other call still waits.
        remember = lookup_card.find_element(By.CSS_SELECTOR, ".tool-card-remember-box")
        remember.send_keys(Keys.SPACE)
        assert remember.is_selected()
        approve.send_keys(Keys.ENTER)
        wait_until(lambda: card(browser, answer_id, "lookup")["state"] == "Approved; waiting for the other calls",
                   message="the first call approved")
        assert card(browser, answer_id, "image")["asking"]
        policies = parley_mcp.api("GET", "/api/tool_policies")["items"]
        assert [policy["tool"] for policy in policies] == ["test/lookup"], policies

        # The last decision resumes the reply: both run, then the answer after the cards.
        card_button(browser, answer_id, "image", "tool-approve")[0].click()
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card", "card", "text"], message="the answer after the calls")
        wait_idle(browser)
        shown = segments(browser, answer_id)
        assert shown[-1]["text"] == "All done.", shown
        assert card(browser, answer_id, "lookup")["status"] == "complete"
        assert "value of k1" in card(browser, answer_id, "lookup")["result"]
        assert card(browser, answer_id, "image")["status"] == "complete"
        image = browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{answer_id}'] .tool-card-image")
        assert image.get_attribute("src").endswith(f"/api/messages/{answer_id}/tool_calls/call_i/content/0") or \
            "/tool_calls/" in image.get_attribute("src"), image.get_attribute("src")
        wait_until(lambda: browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image) == 1,
                   message="the result's image loaded from the server")
        assert el.get_attribute("data-status") == "complete"
    finally:
        fake_upstream.rounds = []
        for policy in parley_mcp.api("GET", "/api/tool_policies")["items"]:
            parley_mcp.api("DELETE", f"/api/tool_policies?tool={policy['tool']}")


def test_deny_after_a_reload_while_awaiting(browser, parley_mcp, fake_upstream):
    try:
        answer_id = start_asking(browser, parley_mcp, fake_upstream, "Look it up, then deny")
        browser.refresh()
        # From the stored parts: the calls still wait, with their buttons.
        wait_until(lambda: [segment.get("asking", False) for segment in segments(browser, answer_id)] == [False, True, True],
                   message="the calls still waiting after a reload")
        card_button(browser, answer_id, "image", "tool-approve")[0].click()
        wait_until(lambda: not card(browser, answer_id, "image")["asking"], message="the image call approved")
        deny, _ = card_button(browser, answer_id, "lookup", "tool-deny")
        deny.click()
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card", "card", "text"], message="the answer after the calls")
        wait_idle(browser)
        denied = card(browser, answer_id, "lookup")
        assert denied["status"] == "denied" and denied["state"] == "Denied" and not denied["asking"], denied
        assert card(browser, answer_id, "image")["status"] == "complete"
        assert parley_mcp.api("GET", "/api/tool_policies")["items"] == []
        # A reload shows the same from the stored parts.
        browser.refresh()
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card", "card", "text"], message="the reply after a reload")
        assert card(browser, answer_id, "lookup")["status"] == "denied"
    finally:
        fake_upstream.rounds = []


def test_a_second_tab_follows_the_reply_another_tab_resumed(browser, parley_mcp, fake_upstream):
    try:
        answer_id = start_asking(browser, parley_mcp, fake_upstream, "Decide in the other tab")
        deciding = browser.current_window_handle
        address = browser.current_url
        browser.switch_to.new_window("tab")
        watching = browser.current_window_handle
        open_page(browser, address.split("/#")[0], "/#" + address.split("/#")[1])
        wait_until(lambda: [segment.get("asking", False) for segment in segments(browser, answer_id)] == [False, True, True],
                   message="the second tab shows the calls waiting")
        wait_until(lambda: browser.execute_script("return document.documentElement.dataset.live") == "ready",
                   message="the second tab's live stream")
        browser.switch_to.window(deciding)
        for tool in ("lookup", "image"):
            card_button(browser, answer_id, tool, "tool-approve")[0].click()
            wait_until(lambda: not card(browser, answer_id, tool)["asking"], message=f"{tool} approved")
        browser.switch_to.window(watching)
        # reply_started reaches this tab: it reads the conversation again and follows the resumed reply.
        wait_until(lambda: kinds(browser, answer_id) == ["text", "card", "card", "text"], timeout=30,
                   message="the resumed reply in the second tab")
        wait_idle(browser)
        assert card(browser, answer_id, "lookup")["status"] == "complete"
        assert segments(browser, answer_id)[-1]["text"] == "All done."
    finally:
        fake_upstream.rounds = []
