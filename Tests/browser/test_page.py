"""The page around the chat: sidebar (pagination, search, rename, delete), a 500-message
conversation, phone width, dark mode, keyboard use, favicon."""
import time
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import conversation_action, messages, open_page, screenshot, send_message, wait_idle, wait_until

LONG_TURNS = 250


def test_sidebar_pages_searches_renames_and_deletes(browser, parley_fast, artifacts):
    ids = []
    for number in range(45):
        ids.append(parley_fast.api("POST", "/api/conversations", {"title": f"Topic {number:02d}"})["id"])
    open_page(browser, parley_fast.base)
    links = lambda: browser.find_elements(By.CSS_SELECTOR, "#conversation-list li:not([hidden]) a")
    wait_until(lambda: len(links()) >= 30, message="the first page of conversations")
    assert links()[0].text == "Topic 44", "newest first"
    # Infinite scroll: scrolling the list loads the next page.
    browser.execute_script("document.querySelector('.conversation-nav').scrollTop = 1e6")
    wait_until(lambda: browser.execute_script(
        "return [...document.querySelectorAll('#conversation-list a')].some(a => a.textContent === 'Topic 00')"),
        message="the last page")
    search = browser.find_element(By.CSS_SELECTOR, "input[aria-label='Search conversations']")
    # The server's full-text search: a quoted phrase (a lone "1" would be too short for its trigrams).
    search.send_keys('"topic 1"')
    results = lambda: browser.find_elements(By.CSS_SELECTOR, "#search-results li a")
    wait_until(lambda: len(results()) == 10, message="ten matches for '\"topic 1\"'")
    search.clear()
    search.send_keys(Keys.SPACE, Keys.BACKSPACE)
    wait_until(lambda: browser.find_element(By.ID, "list-view").is_displayed(), message="the list back")
    # Rename the open conversation through the dialog.
    browser.get(f"{parley_fast.base}/#/c/{ids[3]}")
    wait_until(lambda: browser.find_element(By.ID, "conversation-title").text == "Topic 03", message="title")
    conversation_action(browser, "rename")
    field = browser.find_element(By.ID, "rename-input")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("Renamed topic", Keys.ENTER)
    wait_until(lambda: parley_fast.api("GET", f"/api/conversations/{ids[3]}")["title"] == "Renamed topic",
               message="the rename stored")
    # The page updates the title when the PUT's response arrives, which is after the store has it.
    wait_until(lambda: browser.find_element(By.ID, "conversation-title").text == "Renamed topic",
               message="the new title shown")
    wait_until(lambda: browser.find_element(By.CSS_SELECTOR, f"#conversation-list li[data-id='{ids[3]}'] a").text
               == "Renamed topic", message="the new title in the sidebar")
    # Delete asks first; Cancel keeps it, Delete removes it.
    conversation_action(browser, "delete")
    dialog = browser.find_element(By.ID, "delete-dialog")
    assert dialog.is_displayed()
    screenshot(browser, artifacts, "delete-confirmation")
    dialog.find_element(By.CSS_SELECTOR, "button[value='cancel']").click()
    assert parley_fast.api("GET", f"/api/conversations/{ids[3]}")["id"] == ids[3]
    conversation_action(browser, "delete")
    browser.find_element(By.ID, "delete-confirm").click()
    wait_until(lambda: not browser.find_elements(By.CSS_SELECTOR, f"#conversation-list li[data-id='{ids[3]}']"),
               message="the conversation gone from the list")
    wait_until(lambda: browser.current_url.endswith("#/"), message="back to a fresh page")
    try:
        parley_fast.api("GET", f"/api/conversations/{ids[3]}")
        raise AssertionError("still stored")
    except urllib.error.HTTPError as error:
        assert error.code == 404


def test_fresh_page_accepts_enter_at_once_with_keyboard_only(browser, parley_fast):
    browser.get(parley_fast.base + "/")
    # The composer has the focus at once; Enter sends (Shift+Enter is a newline).
    active = browser.switch_to.active_element
    assert active.get_attribute("aria-label") == "Message"
    empty_height = active.size["height"]
    active.send_keys("line one", Keys.SHIFT, Keys.ENTER, Keys.NULL, "line two")
    assert active.size["height"] > empty_height, "the composer grows with its text"
    assert browser.execute_script("return document.getElementById('input').value") == "line one\nline two"
    active.send_keys(Keys.ENTER)
    wait_until(lambda: len(messages(browser)) == 2, message="the sent message and its answer")
    wait_idle(browser)
    assert "line two" in messages(browser, "user")[0].text
    # Message actions are reachable by keyboard focus.
    answer = messages(browser, "assistant")[0]
    copy = answer.find_element(By.CSS_SELECTOR, "button[aria-label='Copy']")
    browser.execute_script("arguments[0].focus()", copy)
    assert browser.switch_to.active_element == copy
    assert copy.value_of_css_property("opacity") == "1"
    # Tab walks from the composer backwards through the message actions (all real buttons).
    box = browser.find_element(By.ID, "input")
    box.click()
    names = []
    for _ in range(12):
        browser.switch_to.active_element.send_keys(Keys.SHIFT, Keys.TAB)
        element = browser.switch_to.active_element
        names.append(element.get_attribute("aria-label") or element.text)
    assert "Regenerate" in names and "Copy" in names, names


def test_phone_width_and_dark_mode(browser, parley_fast, artifacts):
    browser.set_window_size(390, 844)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                            {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    try:
        open_page(browser, parley_fast.base)
        send_message(browser, "Hello from a phone")
        wait_idle(browser)
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, "no horizontal scrolling on a phone"
        sidebar = browser.find_element(By.ID, "sidebar")
        assert not sidebar.is_displayed() or sidebar.rect["x"] < 0
        background = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(23, 25, 28)", background
        screenshot(browser, artifacts, "phone-dark")
        toggle = browser.find_element(By.CSS_SELECTOR, "button[aria-label='Show conversations']")
        toggle.click()
        wait_until(lambda: browser.find_element(By.ID, "search").is_displayed(), message="the drawer")
        time.sleep(0.3)
        screenshot(browser, artifacts, "phone-dark-sidebar")
        browser.switch_to.active_element.send_keys(Keys.ESCAPE)
        wait_until(lambda: toggle.get_attribute("aria-expanded") == "false", message="the drawer closed")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_favicon_is_a_file(parley_fast):
    with urllib.request.urlopen(parley_fast.base + "/favicon.svg", timeout=5) as response:
        assert response.status == 200
        assert "svg" in response.headers.get("Content-Type", "")


def test_500_message_conversation_renders_fast(browser, parley_bulk, artifacts):
    started = time.monotonic()
    conversation = parley_bulk.api("POST", "/api/conversations", {"title": "Long conversation"})
    for turn in range(LONG_TURNS):
        posted = parley_bulk.api("POST", f"/api/conversations/{conversation['id']}/messages",
                                 {"content": f"Turn {turn}: tell me more"})
        parley_bulk.wait_finished(posted["assistant_message"]["id"])
    built = time.monotonic() - started
    assert built < 60, f"building {LONG_TURNS} turns took {built:.1f} s"

    # Timings on a loaded CI machine are noisy (the browser, the server and the test share two
    # cores with whatever else runs): up to three tries, each a fresh page load and its first scroll
    # to the top (messages use content-visibility, so only a first pass renders them), stopping at
    # the first that meets every bound; each figure is the best seen. Slow rendering or janky
    # scrolling misses its bound every time.
    url = f"{parley_bulk.base}/#/c/{conversation['id']}"
    scroll_js = """
        const done = arguments[arguments.length - 1];
        const box = document.getElementById('messages');
        const times = [];
        let last = performance.now();
        const step = () => {
          const now = performance.now(); times.push(now - last); last = now;
          if (box.scrollTop <= 0 || times.length > 240) { done(times); return; }
          box.scrollTop = box.scrollTop - box.clientHeight * 2;
          requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
    """
    loaded = render_ms = frames = None
    for attempt in range(3):
        browser.get("about:blank")
        load_started = time.monotonic()
        browser.get(url)
        wait_until(lambda: len(messages(browser)) == 2 * LONG_TURNS, timeout=20, message="500 messages")
        took = time.monotonic() - load_started
        rendered = browser.execute_script(
            "const m = performance.getEntriesByName('parley-render'); return m.length ? m[m.length-1].duration : null;")
        wait_until(lambda: browser.execute_script(
            "const s = document.getElementById('messages'); return s.scrollHeight - s.scrollTop - s.clientHeight < 60;"),
            timeout=5, message="the conversation shown from its end")
        # Scroll from the bottom to the top in steps, one step per frame, and time the frames.
        tried = browser.execute_async_script(scroll_js)[1:]
        loaded = took if loaded is None else min(loaded, took)
        if rendered is not None:
            render_ms = rendered if render_ms is None else min(render_ms, rendered)
        if frames is None or max(tried) < max(frames):
            frames = tried
        if loaded < 5 and render_ms is not None and render_ms < 1500 and max(frames) < 250:
            break
    worst = max(frames)
    average = sum(frames) / len(frames)
    print(f"\n[load figures] built {LONG_TURNS} turns via API in {built:.1f} s; page load to 500 messages "
          f"{loaded * 1000:.0f} ms; render (fragment build) {render_ms:.1f} ms; scroll {len(frames)} frames, "
          f"average {average:.1f} ms, worst {worst:.1f} ms")
    screenshot(browser, artifacts, "long-conversation-top")
    assert browser.execute_script("return document.querySelectorAll('[style]').length") == 0
    assert render_ms is not None and render_ms < 1500
    assert loaded < 5
    assert worst < 250, f"a scroll frame took {worst:.0f} ms"
