"""Issue 18, items 1, 4 and 7 on the page, at desktop (1280x800) and phone (390x844) sizes:

- the view follows a long answer over several turns (prose, follow-ups, a long code block) and only
  the person's own scrolling (the wheel) stops it; the "Jump to latest" pill never covers the text and
  brings the view back;
- before the first byte the answer shows an animated "waiting for the model" indicator (still, with
  reduced motion), and no actions until there is text;
- each message's time on hover or focus with the full date in its tooltip, the conversation list in
  day groups (local time zone), no blank band under a question, highlighted committed code (in a
  worker, never while the block streams, a hostile block stays plain without hanging the page), and a
  code header that stays in view while a long block scrolls; axe-core clean on each.
"""
import datetime
import json
import threading
import time
import urllib.request
import zoneinfo

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from axe_check import assert_accessible
from conftest import MOUSE_ARGUMENTS, after_frames, last_assistant_id, make_driver, open_page, send_message, wait_idle, wait_until

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
MESSAGES = "document.getElementById('messages')"


def hover(browser, element):
    """Scrolls `element` into view as a person would (the wheel: a script's scroll would not stop the
    view following the bottom), then moves the mouse over it."""
    delta = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(), v = document.getElementById('messages').getBoundingClientRect();"
        "return Math.round(r.top - v.top - 40);", element)
    if delta < 0:
        ActionChains(browser).scroll_from_origin(
            ScrollOrigin.from_element(browser.find_element(By.ID, "messages")), 0, delta).perform()
        wait_until(lambda: browser.execute_script(
            "return arguments[0].getBoundingClientRect().top >= document.getElementById('messages')"
            ".getBoundingClientRect().top", element), timeout=3, message="the message in view")
    ActionChains(browser).move_to_element(element).perform()


def set_size(browser, size):
    width, height = SIZES[size]
    browser.set_window_size(width, height)
    # The window's outer size includes the browser's frame: make the viewport the size asked for.
    inner = browser.execute_script("return [innerWidth, innerHeight]")
    browser.set_window_size(2 * width - inner[0], 2 * height - inner[1])


# Media features of a touch screen (CDP emulates these; a mouse's needs `mouse_browser`).
TOUCH = {"hover": "none", "pointer": "coarse"}


@pytest.fixture(scope="module")
def mouse_driver():
    driver = make_driver(MOUSE_ARGUMENTS)
    yield driver
    driver.quit()


@pytest.fixture
def mouse_browser(mouse_driver):
    """A browser with a mouse ((hover: hover), (pointer: fine)); fails the test on console errors."""
    mouse_driver.get("about:blank")
    mouse_driver.get_log("browser")
    yield mouse_driver
    errors = [entry for entry in mouse_driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, f"browser console errors: {errors}"


def emulate(browser, **features):
    """CSS media features, e.g. prefers_color_scheme="dark"; none resets them."""
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
        {"name": name.replace("_", "-"), "value": value} for name, value in features.items()]})


def use_fake(browser, parley_fake):
    open_page(browser, parley_fake.base)
    Select(browser.find_element(By.ID, "model")).select_by_value("openai:fake")


def chunked(text, size):
    return [text[i:i + size] for i in range(0, len(text), size)]


def prose(turn, paragraphs=14):
    return "".join(f"Paragraph {n} of answer {turn}: the view should stay with the newest line while it "
                   f"streams, whatever the layout does above it.\n\n" for n in range(paragraphs))


def code(lines, language="python"):
    body = "".join(f"def step_{n}(x):\n    return x * {n}  # step {n}\n" for n in range(lines // 2))
    return f"```{language}\n{body}```\n\n"


# MARK: - Item 1: following the answer

# Records, in the page, every time the pill shows while an answer streams, and the distance from the
# bottom after every change of the list's height: a resize observer made after the page's own, so it
# runs after it in the same frame (observers are called in the order they were made), when the page
# has followed the growth.
FOLLOW_MONITOR_JS = """
const box = document.getElementById('messages');
const jump = document.getElementById('jump-latest');
window.__follow = {pillShown: 0, samples: []};
new MutationObserver(() => {
  if (!jump.hidden && document.querySelector('#message-list .message.is-streaming')) window.__follow.pillShown += 1;
}).observe(jump, {attributes: true, attributeFilter: ['hidden']});
new ResizeObserver(() => {
  if (document.querySelector('#message-list .message.is-streaming') && box.scrollHeight > box.clientHeight) {
    window.__follow.samples.push(box.scrollHeight - box.scrollTop - box.clientHeight);
  }
}).observe(document.getElementById('message-list'));
"""


@pytest.mark.parametrize("size", SIZES)
def test_the_view_follows_a_long_answer_over_several_turns(browser, parley_fake, fake_upstream, size):
    set_size(browser, size)
    fake_upstream.mode = "ok"
    fake_upstream.chunk_delay = 0.01
    try:
        use_fake(browser, parley_fake)
        browser.execute_script(FOLLOW_MONITOR_JS)
        answers = [
            "# First answer\n\n" + prose(1),
            "A follow-up with a list:\n\n" + "".join(f"- item {n}, a little longer than one word\n" for n in range(30))
            + "\n" + prose(2, 6),
            "Here is a long code block:\n\n" + code(160) + "And that is the end of it.\n",
        ]
        for turn, answer in enumerate(answers):
            fake_upstream.answer = chunked(answer, 24)
            send_message(browser, f"Question {turn}")
            wait_idle(browser, timeout=60)
            # After each turn the view is at the very bottom and the pill is hidden.
            wait_until(lambda: browser.execute_script(
                f"const b = {MESSAGES}; return b.scrollHeight - b.scrollTop - b.clientHeight") < 2,
                timeout=3, message="the view at the bottom after the answer")
            assert not browser.find_element(By.ID, "jump-latest").is_displayed()
        follow = browser.execute_script("return window.__follow")
        assert follow["pillShown"] == 0, follow["pillShown"]
        samples = follow["samples"]
        assert len(samples) > 30, samples
        # Pinned: at the bottom after every growth of the answer.
        assert max(samples) <= 1, sorted(samples)[-10:]
    finally:
        fake_upstream.reset()


# From the wheel's first event on: `movedDown` is the first scroll of the view downwards ([from, to]),
# which only following the answer would do (the wheel scrolls it up).
WHEEL_MONITOR_JS = """
const box = document.getElementById('messages');
const wheel = window.__wheel = {armed: false, last: 0, movedDown: null};
box.addEventListener('wheel', () => { wheel.armed = true; wheel.last = box.scrollTop; }, {passive: true, once: true});
box.addEventListener('scroll', () => {
  if (!wheel.armed) return;
  if (box.scrollTop > wheel.last && wheel.movedDown === null) wheel.movedDown = [wheel.last, box.scrollTop];
  wheel.last = box.scrollTop;
}, {passive: true});
"""


@pytest.mark.parametrize("size", SIZES)
def test_a_wheel_scroll_up_stops_following_and_the_pill_brings_it_back(browser, parley_fake, fake_upstream, size):
    set_size(browser, size)
    fake_upstream.mode = "ok"
    fake_upstream.chunk_delay = 0.02
    fake_upstream.answer = chunked("# Long\n\n" + prose(1, 40), 16)
    try:
        use_fake(browser, parley_fake)
        send_message(browser, "A long answer, please")
        wait_until(lambda: browser.execute_script(f"const b = {MESSAGES}; return b.scrollHeight > b.clientHeight + 400"),
                   timeout=30, message="an answer taller than the view")
        box = browser.find_element(By.ID, "messages")
        browser.execute_script(WHEEL_MONITOR_JS)
        ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(box), 0, -300).perform()
        wait_until(lambda: browser.find_element(By.ID, "jump-latest").is_displayed(), timeout=3, message="the pill")
        height = browser.execute_script(f"return {MESSAGES}.scrollHeight")
        wait_until(lambda: browser.execute_script(f"return {MESSAGES}.scrollHeight") > height + 50,
                   timeout=10, message="the answer growing")
        after_frames(browser)  # a view that followed the growth has moved by now
        moved = browser.execute_script("return window.__wheel.movedDown")
        assert moved is None, f"the view moved under the reader (from {moved[0]} to {moved[1]})"
        # The pill is clear of the text: outside the scrolling message view, above the composer.
        geometry = browser.execute_script("""
            const pill = document.getElementById('jump-latest').getBoundingClientRect();
            const view = document.getElementById('messages').getBoundingClientRect();
            const composer = document.getElementById('composer').getBoundingClientRect();
            return {pillTop: pill.top, pillBottom: pill.bottom, viewBottom: view.bottom, composerTop: composer.top};""")
        assert geometry["pillTop"] >= geometry["viewBottom"] - 0.5, geometry
        assert geometry["pillBottom"] <= geometry["composerTop"] + 0.5, geometry
        browser.find_element(By.ID, "jump-latest").click()
        distance = f"const b = {MESSAGES}; return b.scrollHeight - b.scrollTop - b.clientHeight"
        wait_until(lambda: browser.execute_script(distance) < 2, timeout=3, message="back at the bottom")
        # ...and it follows again as the answer grows.
        height = browser.execute_script(f"return {MESSAGES}.scrollHeight")
        wait_until(lambda: browser.execute_script(f"return {MESSAGES}.scrollHeight") > height + 50,
                   timeout=10, message="the answer growing")
        # (The view follows on its next frame: the growth may be seen a frame before the scroll.)
        wait_until(lambda: browser.execute_script(distance) < 48, timeout=2, message="following again")
        assert not browser.find_element(By.ID, "jump-latest").is_displayed()
        wait_idle(browser, timeout=60)
    finally:
        fake_upstream.reset()


# MARK: - Item 4: waiting for the model

WAITING_JS = """
const el = document.querySelector(`#message-list .message[data-id="${arguments[0]}"]`);
const box = el.querySelector('.message-waiting');
const dot = box.querySelector('.waiting-dots > span');
const visible = (node) => !!node && node.getClientRects().length > 0 && getComputedStyle(node).visibility !== 'hidden';
return {shown: visible(box), role: box.getAttribute('role'), text: box.textContent.trim(),
        animation: getComputedStyle(dot).animationName,
        actions: [...el.querySelectorAll('.message-actions > button')].filter(visible).map((b) => b.textContent.trim()),
        text_shown: el.querySelector('.message-body').textContent.trim().length};
"""


@pytest.mark.parametrize("size", SIZES)
def test_a_slow_first_byte_shows_an_animated_waiting_indicator_and_no_actions(browser, parley_fake, fake_upstream, size):
    set_size(browser, size)
    fake_upstream.mode = "ok"
    fake_upstream.first_delay = 5
    try:
        emulate(browser, prefers_reduced_motion="no-preference")
        use_fake(browser, parley_fake)
        send_message(browser, "Take your time")
        answer_id = last_assistant_id(browser)
        state = wait_until(lambda: (lambda s: s if s["shown"] else None)(browser.execute_script(WAITING_JS, answer_id)),
                           timeout=3, message="the waiting indicator")
        assert state["role"] == "status" and state["text"] == "Waiting for the model…", state
        assert state["animation"] == "waiting-pulse", state
        assert state["actions"] == [], state
        # Reduced motion: the same indicator, still.
        emulate(browser, prefers_reduced_motion="reduce")
        state = browser.execute_script(WAITING_JS, answer_id)
        assert state["shown"] and state["animation"] == "none", state
        assert_accessible(browser, f"waiting for the model {size}")
        wait_idle(browser, timeout=30)
        state = browser.execute_script(WAITING_JS, answer_id)
        assert not state["shown"] and state["text_shown"] > 0, state
        assert "Copy" in state["actions"], state
    finally:
        emulate(browser)
        fake_upstream.reset()


def test_a_stream_shows_copy_only_once_there_is_text(browser, parley_fake, fake_upstream):
    """While the first chunks are held back (a gate), the card has no Copy; with text, it has."""
    gate = threading.Event()
    fake_upstream.mode = "ok"
    fake_upstream.answer = ["Some ", "text ", "arrives.\n"]
    fake_upstream.answer_gate = gate
    fake_upstream.answer_gate_index = 0
    try:
        use_fake(browser, parley_fake)
        send_message(browser, "Hello")
        answer_id = last_assistant_id(browser)
        state = wait_until(lambda: (lambda s: s if s["shown"] else None)(browser.execute_script(WAITING_JS, answer_id)),
                           timeout=3, message="the waiting indicator")
        assert state["actions"] == [], state
        gate.set()
        wait_idle(browser)
        state = browser.execute_script(WAITING_JS, answer_id)
        assert not state["shown"] and "Copy" in state["actions"], state
    finally:
        gate.set()
        fake_upstream.reset()


# MARK: - Item 7: times

TIME_JS = """
const el = document.querySelector(`#message-list .message[data-id="${arguments[0]}"]`);
const time = el.querySelector('time.message-time');
return time ? {datetime: time.getAttribute('datetime'), title: time.title, text: time.textContent,
               opacity: getComputedStyle(time).opacity, hidden: time.hidden} : null;
"""


@pytest.mark.parametrize("size", SIZES)
def test_each_message_shows_its_time_on_hover_or_focus(mouse_browser, parley_fast, size):
    browser = mouse_browser
    set_size(browser, size)
    try:
        check_times(browser, parley_fast, size)
    finally:
        emulate(browser)


def check_times(browser, parley_fast, size):
    open_page(browser, parley_fast.base)
    send_message(browser, "What time is it?")
    wait_idle(browser)
    answer_id = last_assistant_id(browser)
    stored = parley_fast.api("GET", f"/api/messages/{answer_id}")
    user_el = browser.find_elements(By.CSS_SELECTOR, "#message-list .message.role-user")[-1]
    user_id = user_el.get_attribute("data-id")
    # The mouse somewhere else: no time shown.
    ActionChains(browser).move_to_element(browser.find_element(By.ID, "composer")).perform()
    wait_until(lambda: browser.execute_script("return document.getElementById('composer').matches(':hover')"),
               message="the mouse over the composer")
    for message_id in (user_id, answer_id):
        shown = browser.execute_script(TIME_JS, message_id)
        assert shown is not None and not shown["hidden"], shown
        assert shown["opacity"] == "0", shown
    shown = browser.execute_script(TIME_JS, answer_id)
    assert shown["datetime"] == stored["created_at"], (shown, stored["created_at"])
    year = str(datetime.datetime.now().year)
    assert year in shown["title"] and shown["text"], shown
    # Hover shows it...
    hover(browser, user_el)
    wait_until(lambda: browser.execute_script(TIME_JS, user_id)["opacity"] == "1", timeout=3, message="time on hover")
    ActionChains(browser).move_to_element(browser.find_element(By.ID, "composer")).perform()
    # ...and so does keyboard focus inside the message.
    browser.execute_script(
        "document.querySelector(`#message-list .message[data-id='${arguments[0]}'] [data-action=copy]`).focus()", answer_id)
    wait_until(lambda: browser.execute_script(TIME_JS, answer_id)["opacity"] == "1", timeout=3, message="time on focus")
    assert_accessible(browser, f"message times {size}")


# MARK: - Item 7: the conversation list by day

def export_document(titles_and_times):
    conversations = []
    for title, when in titles_and_times:
        stamp = when.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        conversations.append({
            "title": title, "model": "demo", "system_prompt": None, "temperature": None, "top_p": None,
            "max_tokens": None, "pinned": False, "archived": False, "current_leaf_id": "m1",
            "created_at": stamp, "updated_at": stamp,
            "messages": [{"id": "m1", "parent_id": None, "role": "user", "content": f"About {title}",
                          "reasoning": "", "status": "complete", "finish_reason": None, "model": None,
                          "usage": None, "error": None, "created_at": stamp, "updated_at": stamp}]})
    return {"parley_export": 1, "conversations": conversations}


GROUPS_JS = """
const groups = {};
let current = null;
for (const li of document.querySelectorAll('#conversation-list > li')) {
  if (li.dataset.group) current = li.dataset.group;
  const label = getComputedStyle(li, '::before').content;
  if (li.dataset.group && label !== `"${li.dataset.group}"`) return {error: 'label not shown', label};
  // The label takes a line of its own above the item's row (link and menu), and nothing scrolls sideways.
  const above = li.querySelector('a').getBoundingClientRect().top - li.getBoundingClientRect().top;
  if (li.dataset.group && above < 12) return {error: 'label beside the title', above};
  const list = li.closest('nav, aside, .sidebar-list, #conversation-list');
  if (list && list.scrollWidth > list.clientWidth + 1) return {error: 'the list scrolls sideways'};
  groups[li.querySelector('.item-title').textContent] = current;
}
return groups;
"""


@pytest.mark.parametrize("size", SIZES)
def test_the_conversation_list_is_grouped_by_day_in_local_time(browser, parley_bulk, size):
    # A zone far from the server's UTC: the groups are the person's days, not the server's.
    zone_name = "Pacific/Auckland"
    zone = zoneinfo.ZoneInfo(zone_name)
    now = datetime.datetime.now(zone)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    tag = f"{size}-{time.monotonic_ns()}"
    cases = [
        (f"today {tag}", min(now - datetime.timedelta(minutes=1), now), "Today"),
        (f"yesterday {tag}", midnight - datetime.timedelta(hours=12), "Yesterday"),
        (f"this week {tag}", midnight - datetime.timedelta(days=4), "Previous 7 days"),
        (f"long ago {tag}", midnight - datetime.timedelta(days=40), "Older"),
    ]
    if now - midnight < datetime.timedelta(minutes=2):
        pytest.skip("too close to midnight in the test zone")
    parley_bulk.api("POST", "/api/import", export_document([(title, when) for title, when, _ in cases]))
    browser.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": zone_name})
    try:
        set_size(browser, size)
        open_page(browser, parley_bulk.base)
        if size == "phone":
            browser.find_element(By.CSS_SELECTOR, "button[aria-label='Show conversations']").click()
        expected = {title: group for title, _, group in cases}
        groups = wait_until(lambda: (lambda g: g if all(t in g for t in expected) else None)(
            browser.execute_script(GROUPS_JS)), timeout=10, message="the imported conversations listed")
        assert {title: groups[title] for title in expected} == expected, groups
        assert_accessible(browser, f"conversation list by day {size}")
    finally:
        browser.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": ""})


# MARK: - Item 7: the actions take no room

BAND_JS = """
const el = [...document.querySelectorAll('#message-list .message.role-user')].pop();
const body = el.querySelector('.message-body').getBoundingClientRect();
const box = el.getBoundingClientRect();
const next = el.nextElementSibling.getBoundingClientRect();
const style = getComputedStyle(el);
const buttons = [...el.querySelectorAll('.message-actions > button')].filter((b) => !b.hidden);
return {band: box.bottom - body.bottom - parseFloat(style.paddingBottom), gap: next.top - box.bottom,
        names: buttons.map((b) => b.getAttribute('aria-label') || b.textContent.trim()),
        sizes: buttons.map((b) => [b.getBoundingClientRect().width, b.getBoundingClientRect().height]),
        bodyTop: body.top, actionsBottom: Math.max(...buttons.map((b) => b.getBoundingClientRect().bottom))};
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", SIZES)
def test_no_blank_band_under_a_question(mouse_browser, parley_fast, size, scheme):
    browser = mouse_browser
    set_size(browser, size)
    emulate(browser, prefers_color_scheme=scheme)
    try:
        open_page(browser, parley_fast.base)
        send_message(browser, "A question with some words in it")
        wait_idle(browser)
        band = browser.execute_script(BAND_JS)
        assert band["band"] <= 2, band
        assert band["gap"] <= 16, band
        assert band["names"] == ["Copy", "Edit", "Fork from here into a new conversation"], band
        # The actions, shown on hover in the header row, never cover the question's text.
        user_el = browser.find_elements(By.CSS_SELECTOR, "#message-list .message.role-user")[-1]
        hover(browser, user_el)
        hovered = browser.execute_script(BAND_JS)
        assert hovered["actionsBottom"] <= hovered["bodyTop"] + 0.5, hovered
        assert browser.execute_script(
            "return getComputedStyle(arguments[0].querySelector('[data-action=copy]')).opacity", user_el) == "1"
        assert_accessible(browser, f"question actions {size} {scheme}")
    finally:
        emulate(browser)


def test_touch_shows_compact_named_icon_buttons(browser, parley_fast):
    set_size(browser, "phone")
    emulate(browser, **TOUCH)
    try:
        open_page(browser, parley_fast.base)
        assert browser.execute_script("return matchMedia('(hover: none)').matches"), "touch emulation"
        send_message(browser, "Hello from a touch screen")
        wait_idle(browser)
        band = browser.execute_script(BAND_JS)
        assert band["names"] == ["Copy", "Edit", "Fork from here into a new conversation"], band
        for width, height in band["sizes"]:
            assert 32 <= width <= 48 and 32 <= height <= 40, band
        answer = browser.execute_script("""
            const el = [...document.querySelectorAll('#message-list .message.role-assistant')].pop();
            return [...el.querySelectorAll('.message-actions > button')].filter((b) => !b.hidden).map((b) => {
              const r = b.getBoundingClientRect();
              return [b.textContent.trim(), r.width, getComputedStyle(b, '::before').content];
            });""")
        assert [name for name, _, _ in answer] == ["Copy", "Regenerate", "Fork"], answer
        assert all(width <= 48 and icon not in ("none", "normal") for _, width, icon in answer), answer
        # No hover: the times are always shown.
        assert browser.execute_script(
            "return [...document.querySelectorAll('#message-list .message-time')].map((t) => getComputedStyle(t).opacity)"
        ) == ["1", "1"]
        assert_accessible(browser, "touch icon buttons")
    finally:
        emulate(browser)


# MARK: - Item 7: code

HIGHLIGHT_MONITOR_JS = """
window.__tailSpans = 0;
new MutationObserver(() => {
  if (document.querySelector('#message-list .message-tail-code [class^="hljs-"]')) window.__tailSpans += 1;
}).observe(document.getElementById('message-list'), {childList: true, subtree: true});
"""
# Asks the page's highlighter (Public/message/highlight.js, one block at a time in the order asked) for a probe
# block of its own and calls back with the probe's final state: every block asked for before it has
# been highlighted by then.
HIGHLIGHTER_PROBE_JS = """
const done = arguments[arguments.length - 1];
import('/message/highlight.js').then(({highlightLater}) => {
  const pre = document.createElement('pre');
  const code = document.createElement('code');
  code.className = 'language-python';
  code.textContent = 'probe = 1\\n';
  pre.hidden = true;
  pre.append(code);
  document.body.append(pre);
  new MutationObserver((_, observer) => {
    if (code.dataset.highlight === 'queued') return;
    observer.disconnect();
    pre.remove();
    done(code.dataset.highlight);
  }).observe(code, {attributes: true, attributeFilter: ['data-highlight']});
  highlightLater(code);
}, (error) => done('import failed: ' + error));
"""

CODE_STATE_JS = """
const el = document.querySelector(`#message-list .message[data-id="${arguments[0]}"]`);
return [...el.querySelectorAll('.message-blocks .codeblock pre > code')].map((code) => ({
  state: code.dataset.highlight || '', spans: code.querySelectorAll('span[class^="hljs-"]').length,
  text: code.textContent.length}));
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", SIZES)
def test_committed_code_is_highlighted_never_while_it_streams(browser, parley_fake, fake_upstream, size, scheme):
    set_size(browser, size)
    emulate(browser, prefers_color_scheme=scheme)
    gate = threading.Event()
    opening = "Some code:\n\n```python\n"
    body = "".join(f"def step_{n}(x):\n    return x * {n}  # \"note\" {n}\n" for n in range(40))
    chunks = [opening] + chunked(body, 20)
    fake_upstream.mode = "ok"
    fake_upstream.answer = chunks + ["```\n\nDone.\n"]
    fake_upstream.answer_gate = gate
    fake_upstream.answer_gate_index = len(chunks)
    try:
        use_fake(browser, parley_fake)
        browser.execute_script(HIGHLIGHT_MONITOR_JS)
        send_message(browser, "Code please")
        answer_id = last_assistant_id(browser)
        wait_until(lambda: browser.execute_script(
            f"const t = document.querySelector(`#message-list .message[data-id='{answer_id}'] .message-tail-code pre`);"
            "return t && t.textContent.length >= arguments[0]", len(body) - 40), timeout=20, message="the open block")
        # While the block is still open, a probe goes through the highlighter: had the open block been
        # asked for, it would have been highlighted first, in the page, before the probe's answer.
        assert browser.execute_async_script(HIGHLIGHTER_PROBE_JS) == "done"
        assert browser.execute_script("return window.__tailSpans") == 0, "highlighted while streaming"
        gate.set()
        wait_idle(browser)
        state = wait_until(lambda: (lambda s: s if s and s[0]["state"] == "done" else None)(
            browser.execute_script(CODE_STATE_JS, answer_id)), timeout=10, message="the block highlighted")
        assert state[0]["spans"] > 40, state
        assert browser.execute_script("return window.__tailSpans") == 0, "highlighted while streaming"
        # The colours are the theme's, and the server's HTML is cmark-gfm's alone.
        colour = browser.execute_script(
            "return getComputedStyle(document.querySelector('#message-list .hljs-keyword')).color")
        assert colour in ("rgb(207, 34, 46)", "rgb(255, 123, 114)"), colour
        stored = parley_fake.api("GET", f"/api/messages/{answer_id}")
        assert "hljs" not in stored["html"] and '<code class="language-python">' in stored["html"]
        assert browser.execute_script(
            "return document.querySelector(`#message-list .message[data-id='${arguments[0]}'] .codeblock pre`)"
            ".textContent", answer_id) == body
        # axe judges the colours with the block's header where it belongs (not stuck over the code, which
        # it could not see through): the block's top in view.
        hover(browser, browser.find_element(
            By.CSS_SELECTOR, f"#message-list .message[data-id='{answer_id}'] .message-blocks .codeblock"))
        assert_accessible(browser, f"highlighted code {size} {scheme}")
    finally:
        gate.set()
        emulate(browser)
        fake_upstream.reset()


RESPONSIVE_MONITOR_JS = """
window.__gaps = {max: 0, last: performance.now(), running: true};
const tick = () => {
  const now = performance.now();
  window.__gaps.max = Math.max(window.__gaps.max, now - window.__gaps.last);
  window.__gaps.last = now;
  if (window.__gaps.running) setTimeout(tick, 20);
};
tick();
"""


def test_a_hostile_code_block_stays_plain_and_the_page_responsive(browser, parley_fake, fake_upstream):
    """A block whose grammar backtracks for many seconds (Rust raw strings, about 15 s in V8) and one
    over the size cap stay plain; the page keeps running meanwhile, and the next block is highlighted
    by a fresh worker."""
    hostile = "```rust\n" + 'r#"' * 30000 + "\n```\n\n"
    huge = "```python\n" + "x = 1\n" * 18000 + "```\n\n"
    fine = "```python\ndef after(x):\n    return x\n```\n"
    fake_upstream.mode = "ok"
    fake_upstream.answer = chunked("Three blocks:\n\n" + hostile + huge + fine, 8000)
    try:
        use_fake(browser, parley_fake)
        send_message(browser, "Something nasty")
        answer_id = last_assistant_id(browser)
        wait_idle(browser, timeout=60)
        browser.execute_script(RESPONSIVE_MONITOR_JS)
        state = wait_until(lambda: (lambda s: s if len(s) == 3 and s[2]["state"] == "done" else None)(
            browser.execute_script(CODE_STATE_JS, answer_id)), timeout=15, message="the last block highlighted")
        gaps = browser.execute_script("window.__gaps.running = false; return window.__gaps.max")
        assert state[0]["state"] == "timeout" and state[0]["spans"] == 0, state
        assert state[1]["state"] == "too-large" and state[1]["spans"] == 0, state
        assert state[2]["spans"] > 0, state
        assert gaps < 500, f"the page stalled for {gaps} ms"
        # Typing still works at once.
        box = browser.find_element(By.ID, "input")
        box.send_keys("still here")
        assert box.get_attribute("value") == "still here"
    finally:
        fake_upstream.reset()


STICKY_JS = """
const box = document.getElementById('messages');
const block = document.querySelector(`#message-list .message[data-id="${arguments[0]}"] .message-blocks .codeblock`);
const head = block.querySelector('.codeblock-head');
// Scroll so that the block's top is well above the view and its bottom below it.
box.scrollTop += block.getBoundingClientRect().top - box.getBoundingClientRect().top + 300;
const view = box.getBoundingClientRect(), b = block.getBoundingClientRect(), h = head.getBoundingClientRect();
const copy = head.querySelector('[data-action="copy-code"]').getBoundingClientRect();
const hit = document.elementFromPoint(copy.left + copy.width / 2, copy.top + copy.height / 2);
return {viewTop: view.top, blockTop: b.top, blockBottom: b.bottom, viewBottom: view.bottom, headTop: h.top,
        copyHit: !!hit && hit.closest('.codeblock-head') === head};
"""


@pytest.mark.parametrize("size", SIZES)
def test_the_code_header_stays_in_view_while_a_long_block_scrolls(browser, parley_fake, fake_upstream, size):
    set_size(browser, size)
    fake_upstream.mode = "ok"
    fake_upstream.answer = chunked("A long block:\n\n" + code(200) + "After it.\n", 4000)
    try:
        use_fake(browser, parley_fake)
        send_message(browser, "Long code")
        answer_id = last_assistant_id(browser)
        wait_idle(browser, timeout=30)
        sticky = browser.execute_script(STICKY_JS, answer_id)
        assert sticky["blockTop"] < sticky["viewTop"] - 200 and sticky["blockBottom"] > sticky["viewBottom"], sticky
        assert abs(sticky["headTop"] - sticky["viewTop"]) <= 1, sticky
        assert sticky["copyHit"], sticky
    finally:
        fake_upstream.reset()
