"""Interactive answers on the page (issue 22), against a real Parley and the scripted fake upstream, whose
model calls the built-in `parley/render_ui` with A2UI v0.9 messages in streamed argument fragments:
every component of the basic catalog renders (tabs, modal, a template list, the uploaded image) and is
axe-clean in both colour schemes; a form's values go out in the action, whose user turn shows as a
chip and reaches the model; `openUrl` asks before it opens; no half tree ever shows (the card says it
is drawing until the tree is complete) and a stop keeps what was complete; a reply to the action
updates the surface where it was created (marked "updated by a later reply"); a reload and a second
tab show the same state; a branch switch shows the other state, and a fork carries the one shown; a
later reply's deleteSurface takes it off with a note; a model's pattern is tried only on what the person
typed; and nothing executes when the XSS payloads of
the Markdown tests are put into every string field (and an id) of every component."""
import json
import os
import threading

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from axe_check import assert_accessible
from conftest import last_assistant_id, messages, open_page, screenshot, send_message, wait_idle, wait_until
from parley_process import ROOT
from test_attachments import png_bytes

TOOL = "parley/render_ui"
FUNCTION = "parley__render_ui"
CATALOG = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
V = "v0.9"

# The components of v0.9's basic catalog Parley draws (Video and AudioPlayer are refused), and Modal.
CATALOG_COMPONENTS = ["Text", "Image", "Icon", "Row", "Column", "List", "Card", "Tabs", "Divider", "Modal", "Button",
                      "TextField", "CheckBox", "ChoicePicker", "Slider", "DateTimeInput"]

# The payload collection of Tests/ParleyMarkdownTests (testPayloadCollectionRendersInert), with
# handlers that would set window.__pwned rather than open an alert.
PAYLOADS = [
    "<script>window.__pwned=1</script>", "<SCRIPT SRC=//evil/x.js></SCRIPT>", "<img src=x onerror=window.__pwned=1>",
    "<svg onload=window.__pwned=1>", "<a href=\"javascript:window.__pwned=1\">x</a>", "[x](javascript:alert(1))",
    "[x]( javascript:alert(1) )", "[x](<javascript:alert(1)>)", "<javascript:alert(1)>",
    "[x](data:text/html,<script>alert(1)</script>)", "![x](\"onerror=\"alert(1))",
    "<style>body{display:none}</style>", "<p style=\"color:red\">x</p>", "<iframe src=//evil>",
    "```\n<script>alert(1)</script>\n```", "`<script>`", "<!-- x --><script>alert(1)</script>",
    "[x][ref]\n\n[ref]: javascript:alert(1) \"t\"", "www.example.com/<script>alert(1)</script>",
    "| a |\n|---|\n| <img src=x onerror=alert(1)> |", "- [ ] <script>alert(1)</script>",
    "x[^1]\n\n[^1]: <script>alert(1)</script>", "<details open ontoggle=window.__pwned=1>",
]


def create(surface_id):
    return {"version": V, "createSurface": {"surfaceId": surface_id, "catalogId": CATALOG}}


def components(surface_id, items):
    return {"version": V, "updateComponents": {"surfaceId": surface_id, "components": items}}


def data(surface_id, value, path=None):
    body = {"surfaceId": surface_id, "value": value}
    if path is not None:
        body["path"] = path
    return {"version": V, "updateDataModel": body}


def fragments(messages_, pieces=4):
    """render_ui's arguments as the model streams them: the JSON text in `pieces` fragments."""
    text = json.dumps({"messages": messages_})
    size = -(-len(text) // pieces)
    return [text[index:index + size] for index in range(0, len(text), size)]


def script_surface(upstream, messages_, text="Here is a form.", after="Fill it in.", hold=None):
    """The model's answer: `text`, a render_ui call of `messages_`, then (given the tool's result) `after`."""
    upstream.mode = "ok"
    upstream.rounds = [
        {"text": [text], "calls": [("call_ui", FUNCTION, fragments(messages_))], "hold": hold},
        {"text": [after]},
    ]


def new_conversation(server, title="Surfaces"):
    created = server.api("POST", "/api/conversations", {"title": title, "model": "openai:fake", "tools": [TOOL]})
    return created["id"]


def ask(driver, server, title, prompt):
    """A new conversation with render_ui, opened on the page, `prompt` sent: its (id, answer's id)."""
    conversation = new_conversation(server, title)
    open_page(driver, server.base, f"/#/c/{conversation}")
    send_message(driver, prompt)
    return conversation, last_assistant_id(driver)


@pytest.fixture(autouse=True)
def no_scripted_rounds_left(fake_upstream):
    """Whatever a test scripted is gone after it, passed or failed: the next test's model starts clean."""
    yield
    fake_upstream.rounds = []


def upload_png(server):
    reply = server.call("POST", "/api/files?filename=pizza.png", raw=png_bytes(24, 16),
                        headers={"Content-Type": "image/png"})
    assert reply.status in (200, 201), reply.status
    return reply.json["id"]


def every_component(surface_id, image_id, text=lambda default: default):
    """A surface with every component of the basic catalog (and Modal), each string given by `text`."""
    t = text
    return [
        {"id": "root", "component": "Card", "child": "col"},
        {"id": "col", "component": "Column", "children": [
            "title", "row", "tabs", "rule", "name", "cheese", "size", "extras", "qty", "day", "actions", "people"]},
        {"id": "actions", "component": "Row", "align": "center", "children": ["order", "menu", "more"]},
        {"id": "title", "component": "Text", "text": t("Order a pizza"), "variant": "h2"},
        {"id": "row", "component": "Row", "align": "center", "children": ["icon", "picture", "greeting"]},
        {"id": "icon", "component": "Icon", "name": "star", "accessibility": {"label": t("Favourite")}},
        {"id": "picture", "component": "Image", "url": f"/api/files/{image_id}", "description": t("A pizza"),
         "variant": "smallFeature"},
        {"id": "greeting", "component": "Text", "text": {"path": "/name"}, "variant": "caption"},
        {"id": "tabs", "component": "Tabs", "tabs": [{"title": t("Dough"), "child": "dough"},
                                                     {"title": t("Sauce"), "child": "sauce"}]},
        {"id": "dough", "component": "Text", "text": t("Thin crust")},
        {"id": "sauce", "component": "Text", "text": t("Tomato")},
        {"id": "rule", "component": "Divider"},
        {"id": "name", "component": "TextField", "label": t("Your name"), "value": {"path": "/name"}},
        {"id": "cheese", "component": "CheckBox", "label": t("Extra cheese"), "value": {"path": "/cheese"}},
        {"id": "size", "component": "ChoicePicker", "label": t("Size"), "value": {"path": "/size"},
         "options": [{"label": t("Small"), "value": "small"}, {"label": t("Large"), "value": "large"}]},
        {"id": "extras", "component": "ChoicePicker", "label": t("Extras"), "variant": "multipleSelection",
         "displayStyle": "chips", "value": {"path": "/extras"},
         "options": [{"label": t("Olives"), "value": "olives"}, {"label": t("Basil"), "value": "basil"}]},
        {"id": "qty", "component": "Slider", "label": t("How many"), "min": 1, "max": 5, "value": {"path": "/qty"}},
        {"id": "day", "component": "DateTimeInput", "label": t("Delivery day"), "enableDate": True,
         "value": {"path": "/day"}},
        {"id": "order", "component": "Button", "child": "order_label", "variant": "primary", "action": {"event": {
            "name": t("order"), "context": {"name": {"path": "/name"}, "cheese": {"path": "/cheese"},
                                         "size": {"path": "/size"}, "extras": {"path": "/extras"},
                                         "qty": {"path": "/qty"}, "day": {"path": "/day"}, "note": t("from the form")}}}},
        {"id": "order_label", "component": "Text", "text": t("Order")},
        {"id": "menu", "component": "Button", "child": "menu_label", "variant": "borderless",
         "action": {"functionCall": {"call": "openUrl", "args": {"url": "https://example.com/menu"}}}},
        {"id": "menu_label", "component": "Text", "text": t("Menu")},
        {"id": "more", "component": "Modal", "trigger": "more_button", "content": "more_text"},
        {"id": "more_button", "component": "Button", "child": "more_label", "action": {"event": {"name": "details"}}},
        {"id": "more_label", "component": "Text", "text": t("Details")},
        {"id": "more_text", "component": "Text", "text": t("Baked in a wood oven.")},
        {"id": "people", "component": "List", "children": {"componentId": "person", "path": "/people"}},
        {"id": "person", "component": "Text", "text": {"path": "name"}},
    ]


FORM_DATA = {"name": "Ada", "cheese": False, "size": ["small"], "extras": [], "qty": 2, "day": "2026-12-24",
             "people": [{"name": "Bo"}, {"name": "Cy"}]}

# What each surface shows: its placeholder or notes, and every component's kind and text.
SURFACES_JS = """
const el = document.querySelector(`#message-list .message[data-id="${arguments[0]}"]`);
if (!el) return null;
return [...el.querySelectorAll('.surface-host')].map((host) => {
  const surface = host.querySelector('.surface');
  const note = host.querySelector('.surface-note');
  return {id: host.dataset.surfaceId, home: host.classList.contains('is-home'), note: note ? note.textContent : '',
          pending: surface ? surface.classList.contains('is-pending') : null,
          text: surface ? surface.innerText : '',
          kinds: surface ? [...surface.querySelectorAll('.a2ui-component')].map((node) => node.dataset.a2uiComponent) : []};
});
"""


def surfaces(driver, message_id):
    return driver.execute_script(SURFACES_JS, message_id) or []


def surface_el(driver, message_id):
    return driver.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{message_id}'] .surface")


def wait_drawn(driver, message_id, word):
    return wait_until(lambda: any(word in item["text"] for item in surfaces(driver, message_id)),
                      message=f"the surface showing {word!r}")


def action_turns(driver):
    return driver.execute_script("""
        return [...document.querySelectorAll('#message-list .message.is-action-turn')].map((el) => ({
          id: el.dataset.id, chip: el.querySelector('.action-chip').textContent,
          context: [...el.querySelectorAll('.action-context-item')].map((row) => row.innerText.replace(/\\s+/g, ' '))}));""")


def test_every_component_renders_and_a_form_sends_its_values(browser, parley_fake, fake_upstream, artifacts):
    image = upload_png(parley_fake)
    script_surface(fake_upstream, [create("pizza"), components("pizza", every_component("pizza", image)),
                                   data("pizza", FORM_DATA)])
    _, answer = ask(browser, parley_fake, "Pizza", "Order me a pizza")
    wait_drawn(browser, answer, "Order a pizza")
    wait_idle(browser)
    shown = surfaces(browser, answer)
    assert len(shown) == 1 and shown[0]["home"] and not shown[0]["pending"] and shown[0]["note"] == "", shown
    assert sorted(set(shown[0]["kinds"])) == sorted(CATALOG_COMPONENTS), shown[0]["kinds"]
    surface = surface_el(browser, answer)
    image_el = surface.find_element(By.CSS_SELECTOR, ".a2ui-image img")
    assert image_el.get_attribute("src").endswith(f"/api/files/{image}") and image_el.get_attribute("alt") == "A pizza"
    wait_until(lambda: browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image_el) == 24,
               message="the uploaded image loaded")
    assert [li.text for li in surface.find_elements(By.CSS_SELECTOR, ".a2ui-list > li")] == ["Bo", "Cy"]
    assert surface.find_element(By.CSS_SELECTOR, "input[type='text']").get_attribute("value") == "Ada"
    assert surface.find_element(By.CSS_SELECTOR, ".a2ui-icon").get_attribute("aria-label") == "Favourite"
    # Choices are a fieldset with its legend; the tabs move with the arrow keys.
    legends = [legend.text for legend in surface.find_elements(By.CSS_SELECTOR, "fieldset > legend")]
    assert legends == ["Size", "Extras"], legends
    tabs = surface.find_elements(By.CSS_SELECTOR, "[role='tab']")
    tabs[0].click()
    tabs[0].send_keys(Keys.ARROW_RIGHT)
    assert tabs[1].get_attribute("aria-selected") == "true" and browser.switch_to.active_element == tabs[1]
    assert "Tomato" in surface.text and "Thin crust" not in surface.text
    # The modal opens from its trigger as a dialog, and Escape closes it.
    surface.find_element(By.XPATH, ".//button[normalize-space()='Details']").click()
    dialog = surface.find_element(By.CSS_SELECTOR, "dialog.a2ui-dialog")
    wait_until(lambda: dialog.get_attribute("open") is not None, message="the modal open")
    assert "Baked in a wood oven." in dialog.text
    assert_accessible(browser, "surface modal open")
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_until(lambda: dialog.get_attribute("open") is None, message="the modal closed")
    assert_accessible(browser, "surface of every component")
    screenshot(browser, artifacts, "surface-every-component")
    if os.environ.get("UPDATE_SCREENSHOT") == "1":  # refreshes the committed docs/surface.png (README)
        browser.set_window_size(1000, 1900)
        browser.execute_script("document.activeElement.blur()")
        reply = browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{answer}']")
        browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", reply)
        (ROOT / "docs" / "surface.png").write_bytes(reply.screenshot_as_png)
        browser.set_window_size(1280, 900)

    # Fill the form: the bound caption follows the name as it is typed.
    name = surface.find_element(By.CSS_SELECTOR, "input[type='text']")
    name.send_keys(Keys.CONTROL, "a")
    name.send_keys("Grace")
    wait_until(lambda: "Grace" in surface.find_element(By.CSS_SELECTOR, ".variant-caption").text,
               message="the bound caption")
    surface.find_element(By.XPATH, ".//label[normalize-space()='Extra cheese']").click()
    surface.find_element(By.XPATH, ".//label[normalize-space()='Large']").click()
    surface.find_element(By.XPATH, ".//label[normalize-space()='Basil']").click()
    surface.find_element(By.CSS_SELECTOR, "input[type='range']").send_keys(Keys.ARROW_RIGHT)
    fake_upstream.rounds = [{"text": ["One large pizza, coming."]}]
    surface.find_element(By.XPATH, ".//button[normalize-space()='Order']").click()
    wait_until(lambda: action_turns(browser), message="the action's user turn")
    wait_idle(browser)
    turn = action_turns(browser)[0]
    assert turn["chip"].strip() == "↩ Chose: order", turn
    assert "name Grace" in turn["context"] and "size large" in turn["context"] and "extras basil" in turn["context"], turn
    stored = parley_fake.api("GET", f"/api/messages/{turn['id']}")
    action = next(part for part in stored["parts"] if part["type"] == "action")
    assert action["surface_id"] == "pizza", action
    sent = action["action"]
    assert sent["name"] == "order" and sent["surfaceId"] == "pizza" and sent["sourceComponentId"] == "order", sent
    assert sent["context"] == {"name": "Grace", "cheese": True, "size": ["large"], "extras": ["basil"], "qty": 3,
                               "day": "2026-12-24", "note": "from the form"}, sent
    assert isinstance(sent["timestamp"], str) and sent["timestamp"].endswith("Z"), sent
    # The model read the action: its JSON is in the last user message it got.
    last = fake_upstream.requests[-1]["messages"][-1]
    assert last["role"] == "user" and '"name":"Grace"' in last["content"], last
    assert "One large pizza, coming." in messages(browser, "assistant")[-1].text
    assert browser.find_element(By.CSS_SELECTOR, f".message[data-id='{turn['id']}'] [data-action='edit']").is_displayed() is False
    assert_accessible(browser, "surface action turn")


def test_openurl_asks_before_it_opens(browser, parley_fake, fake_upstream):
    image = upload_png(parley_fake)
    script_surface(fake_upstream, [create("links"), components("links", every_component("links", image)),
                                   data("links", FORM_DATA)])
    _, answer = ask(browser, parley_fake, "Links", "A menu link please")
    wait_drawn(browser, answer, "Menu")
    wait_idle(browser)
    tabs = len(browser.window_handles)
    surface_el(browser, answer).find_element(By.XPATH, ".//button[normalize-space()='Menu']").click()
    alert = wait_until(lambda: browser.switch_to.alert, message="the confirm dialog")
    assert "https://example.com/menu" in alert.text, alert.text
    alert.dismiss()
    assert len(browser.window_handles) == tabs, "declined: nothing opened"


def held_call(messages_, cut_before):
    """A scripted answer whose render_ui arguments stop (held by the returned event) just before the
    `cut_before`-th message."""
    text = json.dumps({"messages": messages_})
    cut = 0
    for _ in range(cut_before + 1):
        cut = text.index('{"version"', cut + 1)
    hold = threading.Event()
    return hold, {"text": ["Drawing."], "calls": [("call_ui", FUNCTION, [text[:cut], text[cut:]])], "hold": (1, hold)}


def card_state(driver, message_id):
    return driver.execute_script(
        "const card = document.querySelector(`#message-list .message[data-id=\"${arguments[0]}\"] .tool-card`);"
        "return card ? card.querySelector('.tool-card-status-text').textContent : null;", message_id)


def test_no_half_tree_shows_and_a_stop_keeps_what_was_complete(browser, parley_fake, fake_upstream):
    conversation = new_conversation(parley_fake, "Cut short")
    tree = [{"id": "root", "component": "Column", "children": ["status"]},
            {"id": "status", "component": "Text", "text": {"path": "/status"}}]
    # Cut after the tree and its first data: what was complete is drawn, and kept by a stop.
    hold, round_ = held_call([create("cut"), components("cut", tree), data("cut", "Status: first", "/status"),
                              data("cut", "Status: second", "/status")], cut_before=3)
    fake_upstream.mode = "ok"
    fake_upstream.rounds = [round_, {"text": ["Done."]}]
    try:
        open_page(browser, parley_fake.base, f"/#/c/{conversation}")
        send_message(browser, "Draw, then be stopped")
        first = last_assistant_id(browser)
        wait_drawn(browser, first, "Status: first")
        assert card_state(browser, first) == "Drawing an interactive answer…"
        browser.find_element(By.ID, "stop").click()
        wait_idle(browser)
        hold.set()
        browser.refresh()
        wait_drawn(browser, first, "Status: first")
        assert "second" not in surfaces(browser, first)[0]["text"]

        # Cut before the tree has its root: the card says it is drawing, no part of the tree shows, and
        # after a stop nothing broken is left.
        hold, round_ = held_call([create("early"), components("early", tree[1:]),
                                  components("early", tree[:1]), data("early", "Status: late", "/status")], cut_before=2)
        fake_upstream.rounds = [round_, {"text": ["Done."]}]
        send_message(browser, "Draw slowly")
        second = last_assistant_id(browser)
        wait_until(lambda: card_state(browser, second) == "Drawing an interactive answer…", message="the drawing card")
        assert not browser.find_elements(By.CSS_SELECTOR, f"#message-list .message[data-id='{second}'] .a2ui-component")
        browser.find_element(By.ID, "stop").click()
        wait_idle(browser)
        hold.set()
        browser.refresh()
        wait_until(lambda: card_state(browser, second) not in (None, "Drawing an interactive answer…"), message="the card after a reload")
        assert not browser.find_elements(By.CSS_SELECTOR, f"#message-list .message[data-id='{second}'] .a2ui-component")
        wait_drawn(browser, first, "Status: first")
    finally:
        hold.set()


def test_later_replies_update_it_and_a_branch_switch_shows_the_other_state(browser, parley_fake, fake_upstream):
    vote = [
        {"id": "root", "component": "Column", "children": ["status", "yes"]},
        {"id": "status", "component": "Text", "text": {"path": "/status"}},
        {"id": "yes", "component": "Button", "child": "yes_label", "action": {"event": {"name": "vote", "context": {"choice": "yes"}}}},
        {"id": "yes_label", "component": "Text", "text": "Vote yes"},
    ]
    script_surface(fake_upstream, [create("vote"), components("vote", vote), data("vote", "Status: open", "/status")])
    conversation, first = ask(browser, parley_fake, "Votes", "Let us vote")
    wait_drawn(browser, first, "Status: open")
    wait_idle(browser)
    # A second tab open on the same conversation.
    original = browser.current_window_handle
    browser.switch_to.new_window("tab")
    other = browser.current_window_handle
    open_page(browser, parley_fake.base, f"/#/c/{conversation}")
    wait_drawn(browser, first, "Status: open")
    browser.switch_to.window(original)
    # The reply to the action changes the same surface: it shows in the first reply, marked.
    script_surface(fake_upstream, [data("vote", "Status: counted", "/status")], text="Counting.", after="Counted.")
    surface_el(browser, first).find_element(By.XPATH, ".//button[normalize-space()='Vote yes']").click()
    wait_until(lambda: last_assistant_id(browser) != first, message="the reply to the action")
    second = last_assistant_id(browser)
    wait_drawn(browser, first, "Status: counted")
    wait_idle(browser)
    home = surfaces(browser, first)[0]
    assert home["note"] == "Updated by a later reply." and home["home"], home
    later = surfaces(browser, second)
    assert len(later) == 1 and not later[0]["home"] and later[0]["note"].startswith("Updated an interactive answer above."), later
    assert later[0]["text"] == "", "the surface is drawn once, where it was created"
    # The second tab followed live; a reload shows the same state from the stored parts.
    browser.switch_to.window(other)
    wait_drawn(browser, first, "Status: counted")
    wait_until(lambda: surfaces(browser, first)[0]["note"] == "Updated by a later reply.", message="the note live")
    browser.refresh()
    wait_drawn(browser, first, "Status: counted")
    assert surfaces(browser, first)[0]["note"] == "Updated by a later reply."
    browser.close()
    browser.switch_to.window(original)

    # Regenerate the reply to the action: this version changes the surface otherwise.
    script_surface(fake_upstream, [data("vote", "Status: recounted", "/status")], text="Recounting.", after="Again.")
    reply = browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{second}']")
    reply.find_element(By.CSS_SELECTOR, "[data-action='regenerate']").click()
    wait_until(lambda: last_assistant_id(browser) != second, message="the regenerated reply")
    wait_drawn(browser, first, "Status: recounted")
    wait_idle(browser)
    # The other version of the reply: the other state of the same surface.
    newest = browser.find_element(By.CSS_SELECTOR, "#message-list .message.role-assistant:last-child")
    newest.find_element(By.CSS_SELECTOR, "[data-action='prev']").click()
    wait_drawn(browser, first, "Status: counted")
    assert "recounted" not in surfaces(browser, first)[0]["text"]
    assert surfaces(browser, first)[0]["note"] == "Updated by a later reply."
    # A fork at the version shown carries the surface and its state into the new conversation.
    shown = browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{second}'] [data-action='fork']")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", shown)
    shown.click()
    wait_until(lambda: "#/c/" in browser.current_url and not browser.current_url.endswith(conversation),
               message="the fork opened")
    copied = wait_until(lambda: len(messages(browser)) == 4 and messages(browser, "assistant")[0].get_attribute("data-id"),
                        message="the fork shown")
    assert copied != first
    wait_drawn(browser, copied, "Status: counted")
    assert surfaces(browser, copied)[0]["note"] == "Updated by a later reply."


def test_nothing_executes_from_any_string_field(browser, parley_fake, fake_upstream, request):
    image = upload_png(parley_fake)
    counter = iter(range(10_000))

    def hostile(default):
        return PAYLOADS[next(counter) % len(PAYLOADS)] + " " + default

    items = every_component("xss", image, hostile)
    # Ids are strings too: one that would close an attribute or a selector.
    odd = '"]><img src=x onerror=window.__pwned=1>'
    items[1]["children"].append(odd)
    items.append({"id": odd, "component": "Text", "text": hostile("odd id")})
    hostile_data = {"name": PAYLOADS[0], "cheese": True, "size": [PAYLOADS[2]], "extras": [], "qty": 1,
                    "day": PAYLOADS[3], "people": [{"name": payload} for payload in PAYLOADS]}
    script_surface(fake_upstream, [create("xss"), components("xss", items), data("xss", hostile_data)])
    _, answer = ask(browser, parley_fake, "Hostile", "Be hostile")
    wait_drawn(browser, answer, "Order a pizza")
    wait_idle(browser)
    surface = surface_el(browser, answer)
    # Every payload is text: no element the model named exists, nothing ran.
    assert "<script>window.__pwned=1</script>" in surface.text
    assert not surface.find_elements(By.CSS_SELECTOR, "script, iframe, svg:not(.a2ui-icon svg), style, a, details, [onerror], [onload], [style]")
    images = surface.find_elements(By.CSS_SELECTOR, "img")
    assert [img.get_attribute("src").split("/api/")[-1] for img in images] == [f"files/{image}"]
    assert len(surface.find_elements(By.CSS_SELECTOR, ".a2ui-list > li")) == len(PAYLOADS)
    assert browser.execute_script("return window.__pwned === undefined")
    assert "odd id" in surface.text
    assert_accessible(browser, "surface with hostile strings")
    # The action's name and values come back as text in the chip of its turn.
    fake_upstream.rounds = [{"text": ["Noted."]}]
    surface.find_element(By.XPATH, ".//button[contains(normalize-space(), 'Order')]").click()
    turns = wait_until(lambda: action_turns(browser), message="the action's user turn")
    wait_idle(browser)
    assert "order" in turns[0]["chip"] and PAYLOADS[0] in " ".join(turns[0]["context"]), turns
    assert not browser.find_elements(By.CSS_SELECTOR, ".action-turn script, .action-turn img, .action-turn a")
    assert browser.execute_script("return window.__pwned === undefined")


def test_a_surface_a_later_reply_deletes_is_taken_off_with_a_note(browser, parley_fake, fake_upstream):
    tree = [{"id": "root", "component": "Button", "child": "label", "action": {"event": {"name": "finish"}}},
            {"id": "label", "component": "Text", "text": "Finish"}]
    script_surface(fake_upstream, [create("once"), components("once", tree)])
    _, first = ask(browser, parley_fake, "Done with it", "One button")
    wait_drawn(browser, first, "Finish")
    wait_idle(browser)
    script_surface(fake_upstream, [{"version": V, "deleteSurface": {"surfaceId": "once"}}], text="Closing.", after="Closed.")
    surface_el(browser, first).find_element(By.XPATH, ".//button[normalize-space()='Finish']").click()
    wait_until(lambda: last_assistant_id(browser) != first, message="the reply to the action")
    later = last_assistant_id(browser)
    wait_until(lambda: surfaces(browser, first)[0]["note"] == "This interactive answer was removed by a later reply.",
               message="the removed note")
    wait_idle(browser)
    assert surfaces(browser, first)[0]["kinds"] == [] and surfaces(browser, first)[0]["pending"] is None
    assert surfaces(browser, later)[0]["note"] == "Removed an interactive answer above."
    browser.refresh()
    wait_until(lambda: surfaces(browser, first) and surfaces(browser, first)[0]["note"].startswith("This interactive answer was removed"),
               message="the removed note after a reload")


def test_a_pattern_is_only_tried_on_what_the_person_typed(browser, parley_fake, fake_upstream):
    # The model's own value does not match its patterns: nothing is tested (no error) until the person types.
    digits = "^[0-9]+$"
    field = {"id": "root", "component": "TextField", "label": "Code", "value": {"path": "/code"},
             "validationRegexp": digits,
             "checks": [{"message": "Digits only", "condition": {"call": "regex",
                                                                 "args": {"value": {"path": "/code"}, "pattern": digits}}}]}
    script_surface(fake_upstream, [create("pat"), components("pat", [field]), data("pat", {"code": "abc"})])
    _, answer = ask(browser, parley_fake, "Patterns", "Ask me for a code")
    wait_until(lambda: any("Code" in item["text"] for item in surfaces(browser, answer)), message="the field drawn")
    wait_idle(browser)
    surface = surface_el(browser, answer)
    control = surface.find_element(By.CSS_SELECTOR, "input[type='text']")
    assert control.get_attribute("value") == "abc"
    assert control.get_attribute("aria-invalid") is None
    assert not [error for error in surface.find_elements(By.CSS_SELECTOR, ".a2ui-error") if error.is_displayed()]
    control.send_keys("x")
    wait_until(lambda: control.get_attribute("aria-invalid") == "true", message="the typed value tested")
    assert "Digits only" in surface.find_element(By.CSS_SELECTOR, ".a2ui-error").text
    control.send_keys(Keys.CONTROL, "a")
    control.send_keys("42")
    wait_until(lambda: control.get_attribute("aria-invalid") is None, message="a matching value accepted")
