"""Harness for Parley's browser tests: real `parley` processes (port 0, temp DB, --public Public),
headless Chromium through the system chromedriver, and a console-error check after every test."""
import os
import re
import sys
import time
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pytools"))
from fake_upstream import FakeUpstream  # noqa: E402
from parley_cluster import ParleyCluster  # noqa: E402
from parley_process import ROOT, ParleyProcess  # noqa: E402

PUBLIC = Path(os.environ.get("PARLEY_PUBLIC", ROOT / "Public")).resolve()
ARTIFACTS = Path(os.environ.get("ARTIFACTS_DIR", Path(__file__).resolve().parent / "artifacts"))
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


# MARK: - Parley processes

def start_parley(name, env):
    """A real server process (Tests/pytools/parley_process.py) serving PUBLIC; its log is kept in the
    artifacts as server-NAME.log."""
    return ParleyProcess(env, name=name, public=PUBLIC, log_dir=ARTIFACTS)


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def parley_fast(artifacts):
    # An import limit of 1 MiB (PARLEY_MAX_IMPORT_BYTES), so a hostile import over it stays small.
    server = start_parley("fast", {"PARLEY_DEMO_TOKENS_PER_SECOND": "300", "PARLEY_MAX_IMPORT_BYTES": "1048576"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def parley_slow(artifacts):
    """Slow enough to stop, reload or continue in the middle of an answer (~5 s per answer)."""
    server = start_parley("slow", {"PARLEY_DEMO_TOKENS_PER_SECOND": "60"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def parley_cluster(artifacts):
    """Three nodes on one PostgreSQL and Redis behind nginx round-robin (scripts/cluster.sh): each
    request of the page may land on another node. Answers take ~5 s, so a reload comes mid-answer."""
    cluster = ParleyCluster({"PARLEY_DEMO_TOKENS_PER_SECOND": "60"}, public=PUBLIC, log_dir=artifacts)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def parley_slower(artifacts):
    """For tests that do several things while one answer streams (~15 s per answer): at 60 tokens
    per second a loaded machine could see the answer end before the test got to look at it."""
    server = start_parley("slower", {"PARLEY_DEMO_TOKENS_PER_SECOND": "20"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def parley_bulk(artifacts):
    """Demo answers without delay, for building a long conversation through the API."""
    server = start_parley("bulk", {"PARLEY_DEMO_TOKENS_PER_SECOND": "0"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def parley_limited(artifacts):
    """One live reply at a time (429 past it) and replies cut at 400 bytes (finish_reason length).
    20 tokens per second: the reply that holds the only slot lasts ~5 s, long enough for the browser
    to be refused while it runs, even on a loaded machine."""
    server = start_parley("limited", {"PARLEY_DEMO_TOKENS_PER_SECOND": "20", "PARLEY_MAX_GENERATIONS": "1",
                                      "PARLEY_MAX_REPLY_BYTES": "400"})
    yield server
    server.stop()


TEAM_ADMIN = ("ada", "correct horse battery")
# Team mode: sign-in needed; Argon2id at a small memory cost so that signing in stays fast.
TEAM_ENV = {"PARLEY_AUTH": "on", "PARLEY_ADMIN_USER": TEAM_ADMIN[0], "PARLEY_ADMIN_PASSWORD": TEAM_ADMIN[1],
            "PARLEY_PASSWORD_MEMORY_KIB": "64", "PARLEY_DEMO_TOKENS_PER_SECOND": "300"}


@pytest.fixture(scope="session")
def parley_team(artifacts):
    server = start_parley("team", TEAM_ENV)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def parley_team_slow(artifacts):
    """Team mode with answers slow enough (~15 s) to lose a stream's connection in the middle."""
    server = start_parley("team-slow", {**TEAM_ENV, "PARLEY_DEMO_TOKENS_PER_SECOND": "20"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def parley_team_limited(artifacts):
    """Team mode that refuses sign-in (429) after two failures: its own server, because the limit also
    counts per address and every test signs in from 127.0.0.1."""
    server = start_parley("team-limited", {**TEAM_ENV, "PARLEY_LOGIN_ATTEMPTS": "2"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def fake_upstream():
    """Fails until a test sets `mode`: a test that forgets to script it sees an error, not an answer."""
    upstream = FakeUpstream(mode="fail")
    yield upstream
    upstream.stop()


@pytest.fixture(scope="session")
def parley_fake(artifacts, fake_upstream):
    server = start_parley("fake", {"PARLEY_OPENAI_BASE_URL": fake_upstream.base_url,
                                   "PARLEY_OPENAI_MODELS": "fake",
                                   "PARLEY_DEMO_TOKENS_PER_SECOND": "300"})
    yield server
    server.stop()


# MARK: - Browser

def make_driver(extra_arguments=()):
    """Headless Chromium; `extra_arguments` are more command-line switches (see MOUSE_ARGUMENTS)."""
    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,900", "--disable-extensions", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     # No CSS transitions: nothing a test reads is ever half-way through one.
                     "--force-prefers-reduced-motion", *extra_arguments):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The system chromedriver: with an explicit path Selenium Manager is not asked for a driver.
    service = Service(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(30)
    return driver


# Headless Chromium matches (hover: none) and (pointer: none), and CDP cannot emulate a mouse's
# (hover: hover): a browser started with these switches has a mouse, for tests of hover behaviour.
MOUSE_ARGUMENTS = ("--blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,"
                   "availablePointerTypes=4",)


@pytest.fixture(scope="session")
def session_driver():
    driver = make_driver()
    yield driver
    driver.quit()


@pytest.fixture
def browser(session_driver, artifacts, request):
    """The shared browser, reset to one tab; fails the test on any console error."""
    driver = session_driver
    driver.get("about:blank")
    driver.get_log("browser")  # drain what earlier tests left
    driver.set_window_size(1280, 900)
    yield driver
    errors = []
    for handle in driver.window_handles:
        driver.switch_to.window(handle)
        errors += [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)
    try:
        driver.save_screenshot(str(artifacts / f"end-{name}.png"))
    except Exception:
        pass
    while len(driver.window_handles) > 1:
        driver.switch_to.window(driver.window_handles[-1])
        driver.close()
    driver.switch_to.window(driver.window_handles[0])
    allowed = getattr(request.node, "allowed_console", [])
    errors = [e for e in errors if not any(pattern in e["message"] for pattern in allowed)]
    assert not errors, f"browser console errors: {errors}"


# MARK: - Page helpers shared by the tests

def wait_until(predicate, timeout=15, interval=0.05, message="condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
            if last:
                return last
        except Exception as error:  # element replaced mid-check, and the like
            last = error
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {message} (last: {last!r})")


def after_frames(driver, count=2):
    """Returns once the page has drawn `count` more frames: whatever a frame had scheduled (a view
    following growth, a hover's style) has run by then."""
    driver.execute_async_script(
        "const [count, done] = arguments; const step = (n) => n ? requestAnimationFrame(() => step(n - 1)) : done();"
        " step(count);", count)


def open_page(driver, base, path="/"):
    driver.get(base + path)
    wait_until(lambda: driver.execute_script(
        "return document.readyState === 'complete' && document.getElementById('model').options.length > 0"),
        message="page and models loaded")


def send_message(driver, text):
    """Types and sends with Enter; returns once the user message and its answer are on the page."""
    before = len(messages(driver))
    box = driver.find_element(By.CSS_SELECTOR, "textarea[aria-label='Message']")
    box.click()
    box.send_keys(text)
    box.send_keys(Keys.ENTER)
    wait_until(lambda: len(messages(driver)) >= before + 2, message="the sent message and its answer")


def messages(driver, role=None):
    selector = ".message" + (f".role-{role}" if role else "")
    return driver.find_elements(By.CSS_SELECTOR, f"#message-list {selector}")


def last_assistant_id(driver):
    return wait_until(lambda: driver.execute_script(
        "const m = document.querySelectorAll('#message-list .message.role-assistant');"
        "return m.length ? m[m.length - 1].dataset.id : null;"), message="an assistant message")


def wait_idle(driver, timeout=30):
    """Until no answer streams and the Send button is back."""
    wait_until(lambda: driver.execute_script(
        "return !document.querySelector('#message-list .message.is-streaming')"
        " && !document.getElementById('send').hidden"
        " && document.querySelectorAll('#message-list .message[data-status=streaming]').length === 0;"),
        timeout=timeout, message="the answer to finish")


SHOWN_VS_STORED_JS = """
const [id, html] = arguments;
const el = document.querySelector(`#message-list .message[data-id="${id}"]`);
if (!el) return {error: 'no element'};
const shown = el.querySelector('.message-blocks').cloneNode(true);
shown.querySelectorAll('.codeblock-head').forEach((n) => n.remove());
const stored = document.createElement('template');
stored.innerHTML = html;
const tail = el.querySelector('.message-tail');
return {shown: shown.textContent, stored: stored.content.textContent,
        tail: tail.hidden ? '' : tail.textContent};
"""


def assert_shows_stored(driver, server, message_id):
    """The page shows exactly the stored message: same text, nothing left in the raw tail."""
    stored = server.api("GET", f"/api/messages/{message_id}")
    assert isinstance(stored.get("html"), str), stored
    result = driver.execute_script(SHOWN_VS_STORED_JS, message_id, stored["html"])
    assert result.get("tail") == "", result
    assert result["shown"] == result["stored"], (result, stored["content"])
    return stored


def open_conversation_menu(driver, item_id=None):
    """Opens the "⋯" menu of the open conversation (top bar), or of the list item `item_id`; returns
    the menu element once its items show."""
    if item_id:
        button = driver.find_element(By.CSS_SELECTOR, f"#list-view li[data-id='{item_id}'] .item-menu-button")
    else:
        button = driver.find_element(By.ID, "conversation-actions")
    menu = driver.find_element(By.ID, button.get_attribute("aria-controls"))
    if button.get_attribute("aria-expanded") != "true":
        button.click()
    wait_until(lambda: menu.is_displayed() and menu.find_elements(By.CSS_SELECTOR, "[role='menuitem']"),
               message="the conversation menu open")
    return menu


def conversation_action(driver, action, item_id=None):
    """Chooses `action` (pin, archive, rename, export-json, export-markdown, delete) in a "⋯" menu."""
    menu = open_conversation_menu(driver, item_id)
    menu.find_element(By.CSS_SELECTOR, f"[data-action='{action}']").click()


def menu_label(driver, action, item_id=None):
    """The label an item of a "⋯" menu has now (the menu is opened to read it, then closed)."""
    menu = open_conversation_menu(driver, item_id)
    text = menu.find_element(By.CSS_SELECTOR, f"[data-action='{action}']").text
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_until(lambda: not menu.is_displayed(), message="the menu closed")
    return text


def screenshot(driver, artifacts, name):
    path = artifacts / f"{name}.png"
    driver.save_screenshot(str(path))
    return path
