"""Live sync: a change made in one tab (a new conversation, a rename, a reply, a delete) appears in
another tab of the same browser within a second, carried by each tab's one user event stream
(GET /api/events), not by the refresh a tab does when it comes back to the front."""
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import assert_shows_stored, conversation_action, messages, open_page, send_message, wait_idle, wait_until

# Records in the page the first time (Date.now()) `condition` holds, checked on every DOM change:
# the time is taken where the change happens, while the tab is in the background. It also reports
# it in localStorage (SEEN_KEY + name), which the tab in front reads without bringing this one forward.
SEEN_KEY = "parley-test.seen."
WATCH_JS = """
const [name, condition, key] = arguments;
const test = new Function(`return (${condition});`);
window.__seen = window.__seen || {};
window.__seen[name] = null;
localStorage.removeItem(key);
const check = () => {
  if (window.__seen[name] !== null || !test()) return;
  window.__seen[name] = Date.now();
  localStorage.setItem(key, String(window.__seen[name]));
};
new MutationObserver(check).observe(document.documentElement,
  {subtree: true, childList: true, characterData: true, attributes: true});
check();
"""

LIMIT_MS = 1000


def live_ready(driver):
    wait_until(lambda: driver.execute_script("return document.documentElement.dataset.live === 'ready'"),
               message="the tab's user event stream")


def watch(driver, name, condition):
    driver.execute_script(WATCH_JS, name, condition, SEEN_KEY + name)
    assert driver.execute_script("return window.__seen[arguments[0]]", name) is None, f"{name} already true"


def act_then_check(browser, acting, watching, name, action):
    """Runs `action` in the `acting` tab, then checks that `name` became true in the `watching` tab
    within LIMIT_MS of the action's start and before the watching tab came back to the front."""
    browser.switch_to.window(acting)
    started = browser.execute_script("return Date.now()")
    action()
    # The watching tab, still in the background, reports the change (WATCH_JS) before it comes forward.
    wait_until(lambda: browser.execute_script("return localStorage.getItem(arguments[0])", SEEN_KEY + name),
               timeout=10 * LIMIT_MS / 1000, message=f"{name} shown in the other tab while in the background")
    back = browser.execute_script("return Date.now()")
    browser.switch_to.window(watching)
    seen = browser.execute_script("return window.__seen[arguments[0]]", name)
    assert seen is not None, f"{name}: not shown in the other tab within {LIMIT_MS} ms (before it came to the front)"
    assert seen < back, name
    delay = seen - started
    print(f"live sync: {name} shown in the other tab {delay} ms after the action began")
    assert delay <= LIMIT_MS, f"{name}: {delay} ms"
    return delay


def test_a_change_in_one_tab_appears_in_another_within_a_second(browser, parley_fast, artifacts):
    open_page(browser, parley_fast.base)
    tab_a = browser.current_window_handle
    live_ready(browser)
    browser.switch_to.new_window("tab")
    tab_b = browser.current_window_handle
    open_page(browser, parley_fast.base)
    live_ready(browser)

    # A new conversation (the first message of a fresh page) appears in the other tab's list.
    title = "Live from tab A"
    watch(browser, "created", f"[...document.querySelectorAll('#conversation-list a')].some(a => a.textContent === {title!r})")
    act_then_check(browser, tab_a, tab_b, "created", lambda: send_message(browser, title))
    browser.switch_to.window(tab_a)
    wait_idle(browser)
    conversation_id = browser.current_url.split("#/c/")[1]

    # Tab B opens the conversation; A renames it: B's list and B's heading follow.
    browser.switch_to.window(tab_b)
    browser.get(f"{parley_fast.base}/#/c/{conversation_id}")
    wait_until(lambda: len(messages(browser)) == 2, message="the conversation in tab B")
    wait_idle(browser)
    live_ready(browser)
    watch(browser, "renamed", "document.getElementById('conversation-title').textContent === 'Renamed in A'"
                              " && [...document.querySelectorAll('#conversation-list a')]"
                              ".some(a => a.textContent === 'Renamed in A')")

    def rename():
        conversation_action(browser, "rename")
        field = browser.find_element(By.ID, "rename-input")
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys("Renamed in A", Keys.ENTER)

    act_then_check(browser, tab_a, tab_b, "renamed", rename)

    # A reply: A sends; B shows the new turn and follows its answer on its own stream.
    browser.switch_to.window(tab_b)
    watch(browser, "turn", "document.querySelectorAll('#message-list .message.role-user').length === 2"
                           " && document.querySelectorAll('#message-list .message.role-assistant').length === 2")
    act_then_check(browser, tab_a, tab_b, "turn", lambda: send_message(browser, "And a second question"))
    browser.switch_to.window(tab_b)
    wait_idle(browser)
    answers = messages(browser, "assistant")
    assert_shows_stored(browser, parley_fast, answers[-1].get_attribute("data-id"))
    assert answers[-1].get_attribute("data-status") == "complete"

    # A deletes it: it leaves B's list and B's view says so.
    watch(browser, "deleted", f"!document.querySelector('#conversation-list li[data-id=\"{conversation_id}\"]')"
                              " && !document.getElementById('route-notice').hidden")

    def delete():
        wait_idle(browser)
        conversation_action(browser, "delete")
        browser.find_element(By.ID, "delete-confirm").click()

    act_then_check(browser, tab_a, tab_b, "deleted", delete)
    browser.switch_to.window(tab_b)
    assert "deleted" in browser.find_element(By.ID, "route-notice").text
    assert browser.current_url.endswith("#/")


def test_a_change_made_elsewhere_reaches_a_tab_that_stays_in_front(browser, parley_fast):
    """Another device (here: the API) renames and answers: the tab in front updates without any
    focus change, and a reply started elsewhere is followed live on the tab's one stream."""
    conversation = parley_fast.api("POST", "/api/conversations", {"title": "Made elsewhere"})
    open_page(browser, parley_fast.base, f"/#/c/{conversation['id']}")
    live_ready(browser)
    started = time.monotonic()
    parley_fast.api("PATCH", f"/api/conversations/{conversation['id']}", {"title": "Renamed elsewhere"})
    wait_until(lambda: browser.find_element(By.ID, "conversation-title").text == "Renamed elsewhere",
               timeout=LIMIT_MS / 1000, message="the rename within a second")
    turn = parley_fast.api("POST", f"/api/conversations/{conversation['id']}/messages", {"content": "From the API"})
    answer_id = turn["assistant_message"]["id"]
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, f"#message-list .message[data-id='{answer_id}']"),
               timeout=LIMIT_MS / 1000, message="the new turn within a second")
    wait_idle(browser)
    assert_shows_stored(browser, parley_fast, answer_id)
    print(f"live sync from the API: {time.monotonic() - started:.2f} s for rename, turn and answer")
