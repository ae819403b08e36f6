"""Organising conversations on the page: server search with highlighted snippets (debounced, only the
newest answer shown, errors shown), pin and archive (the Pinned group, Show archived, live from
another tab) and fork at a message."""
import json
import secrets
import string
import urllib.error

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import conversation_action, menu_label, messages, open_page, wait_until


# MARK: - Helpers

def unique(prefix):
    """A word no other test wrote (letters only: the trigram index finds it as a part of a word too)."""
    return prefix + "".join(secrets.choice(string.ascii_lowercase) for _ in range(8))


def make_conversation(server, title, questions):
    """A conversation with one finished turn per question; returns its id and its messages' ids
    (question, answer, question, answer, …)."""
    conversation = server.api("POST", "/api/conversations", {"title": title})
    ids = []
    for question in questions:
        turn = server.api("POST", f"/api/conversations/{conversation['id']}/messages", {"content": question})
        server.wait_finished(turn["assistant_message"]["id"])
        ids += [turn["user_message"]["id"], turn["assistant_message"]["id"]]
    return conversation["id"], ids


def api_error(server, method, path, body=None):
    """The error body of a request that must fail."""
    try:
        server.api(method, path, body)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())["error"]
    raise AssertionError(f"{method} {path} succeeded")


def search_box(driver):
    return driver.find_element(By.ID, "search")


def search_status(driver):
    return driver.find_element(By.ID, "search-status").text


def result(driver, conversation_id):
    found = driver.find_elements(By.CSS_SELECTOR, f"#search-results li[data-id='{conversation_id}']")
    return found[0] if found and found[0].is_displayed() else None


def listed_in(driver, conversation_id):
    """Which list shows the conversation: 'pinned', 'list' or None."""
    return driver.execute_script("""
        const li = document.querySelector(`#list-view li[data-id="${arguments[0]}"]`);
        if (!li || li.offsetParent === null) return null;
        return li.parentElement.id === 'pinned-list' ? 'pinned' : 'list';""", conversation_id)


def list_shown(driver):
    return driver.execute_script(
        "return !document.getElementById('list-view').hidden && document.getElementById('search-results').hidden"
        " && document.getElementById('search-status').textContent === ''")


def live_ready(driver):
    wait_until(lambda: driver.execute_script("return document.documentElement.dataset.live === 'ready'"),
               message="the tab's user event stream")


def click_action(driver, message_el, action):
    button = message_el.find_element(By.CSS_SELECTOR, f"button[data-action='{action}']")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    return button


# Records every search request the page makes, and holds back the answer to one query (`slow`) so
# that a newer query's answer arrives first.
FETCH_SPY_JS = """
const slow = arguments[0];
window.__searches = [];
window.__slowSettled = false;
const real = window.fetch.bind(window);
window.fetch = (url, init) => {
  const q = new URL(String(url), location.href).searchParams.get('q');
  if (q === null) return real(url, init);
  window.__searches.push(q);
  if (q !== slow) return real(url, init);
  return new Promise((resolve, reject) => setTimeout(() => {
    real(url, init).then(resolve, reject).finally(() => { window.__slowSettled = true; });
  }, 1500));
};
"""


# MARK: - Search

def test_search_finds_message_text_marks_it_opens_the_message_and_clearing_returns_the_list(browser, parley_fast):
    word = unique("zephyr")
    conversation_id, ids = make_conversation(parley_fast, "Plans for the weekend",
                                             [f"Tell me about the {word} in the garden"])
    open_page(browser, parley_fast.base)
    wait_until(lambda: listed_in(browser, conversation_id) == "list", message="the conversation listed")
    box = search_box(browser)
    box.send_keys(word.upper())  # matching ignores case
    item = wait_until(lambda: result(browser, conversation_id), message="the search result")
    assert search_status(browser) == "1 result."
    assert item.find_element(By.CSS_SELECTOR, ".result-title").text == "Plans for the weekend"
    marks = item.find_elements(By.CSS_SELECTOR, ".result-snippet mark")
    assert [mark.text.lower() for mark in marks] == [word], item.get_attribute("innerHTML")
    assert word in item.find_element(By.CSS_SELECTOR, ".result-snippet").text
    assert not browser.find_element(By.ID, "list-view").is_displayed(), "the results replace the list"

    # The result opens the conversation at the message that matched, highlighted for a moment.
    link = item.find_element(By.TAG_NAME, "a")
    message_id = link.get_attribute("data-message-id")
    assert message_id in ids
    browser.execute_script("""
        window.__found = [];
        new MutationObserver((changes) => {
          for (const change of changes) {
            if (change.target.classList && change.target.classList.contains('is-found')) window.__found.push(change.target.dataset.id);
          }
        }).observe(document.getElementById('message-list'), {subtree: true, attributes: true, attributeFilter: ['class']});""")
    link.click()
    wait_until(lambda: browser.current_url.endswith(f"#/c/{conversation_id}"), message="the conversation opened")
    wait_until(lambda: browser.find_element(By.ID, "conversation-title").text == "Plans for the weekend",
               message="its title")
    wait_until(lambda: message_id in browser.execute_script("return window.__found"), message="the message highlighted")
    assert result(browser, conversation_id), "the results stay after opening one"
    assert result(browser, conversation_id).find_element(By.TAG_NAME, "a").get_attribute("aria-current") == "page"

    # Escape clears the box and brings the list back.
    box.send_keys(Keys.ESCAPE)
    wait_until(lambda: list_shown(browser), message="the list back after Escape")
    assert box.get_attribute("value") == ""
    assert listed_in(browser, conversation_id) == "list"
    # So does deleting what was typed.
    box.send_keys(word[:5])
    wait_until(lambda: result(browser, conversation_id), message="results for the start of the word")
    box.send_keys(Keys.BACKSPACE * 5)
    wait_until(lambda: list_shown(browser), message="the list back once the box is empty")


def test_search_snippet_with_hostile_text_is_shown_as_text(browser, parley_fast):
    word = unique("quokka")
    hostile = f'{word} <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script>'
    conversation_id, _ = make_conversation(parley_fast, "Markup test", [hostile])
    open_page(browser, parley_fast.base)
    search_box(browser).send_keys(word)
    item = wait_until(lambda: result(browser, conversation_id), message="the search result")
    snippet = item.find_element(By.CSS_SELECTOR, ".result-snippet")
    assert "<img src=x onerror=" in snippet.text, snippet.text
    assert not browser.find_elements(By.CSS_SELECTOR, "#search-results img, #search-results script")
    assert [child.tag_name for child in snippet.find_elements(By.XPATH, "./*")] == ["mark"]
    assert browser.execute_script("return window.__pwned === undefined")
    # Defence in depth: markup other than <mark> that ever reached the page would be kept as text only
    # (no event handler here: Chrome reports one as a CSP violation even in an inert template).
    cleaned = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('/sidebar/search.js').then((module) => {
          const holder = document.createElement('div');
          holder.append(module.snippetNodes(
            '<mark>ok</mark> <img src=x><script>window.__pwned=3</script><b>bold</b> <mark><i>in</i></mark>'));
          done(holder.innerHTML);
        });""")
    assert cleaned == "<mark>ok</mark> window.__pwned=3bold <mark>in</mark>"
    assert browser.execute_script("return window.__pwned === undefined")


def test_search_errors_are_shown_and_a_valid_query_recovers(browser, parley_fast, request):
    request.node.allowed_console = ["status of 400"]  # the refused queries, expected
    word = unique("walrus")
    conversation_id, _ = make_conversation(parley_fast, "Error recovery", [f"The {word} sleeps"])
    open_page(browser, parley_fast.base)
    status, invalid = api_error(parley_fast, "GET", "/api/conversations?q=%28abc")
    assert status == 400 and invalid["code"] == "invalid_query"
    box = search_box(browser)
    box.send_keys("(abc")
    wait_until(lambda: search_status(browser) == invalid["message"], message="the server's invalid_query message")
    assert not browser.find_element(By.ID, "search-results").is_displayed()
    assert not browser.find_element(By.ID, "list-view").is_displayed()
    # Too long a query: the server's query_too_long message.
    long_query = "a" * 300
    status, too_long = api_error(parley_fast, "GET", f"/api/conversations?q={long_query}")
    assert status == 400 and too_long["code"] == "query_too_long"
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(long_query)
    wait_until(lambda: search_status(browser) == too_long["message"], message="the server's query_too_long message")
    # A valid query shows results again.
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(word)
    wait_until(lambda: result(browser, conversation_id), message="results after the error")
    assert search_status(browser) == "1 result."
    # A query nothing matches says so.
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(unique("nothing"))
    wait_until(lambda: search_status(browser) == "No conversation matches.", message="no match")
    assert not browser.find_element(By.ID, "search-results").is_displayed()


def test_search_is_debounced_and_only_the_newest_answer_is_shown(browser, parley_fast):
    first, second = unique("ferret"), unique("badger")
    first_id, _ = make_conversation(parley_fast, "First animal", [f"About the {first}"])
    second_id, _ = make_conversation(parley_fast, "Second animal", [f"About the {second}"])
    open_page(browser, parley_fast.base)
    browser.execute_script(FETCH_SPY_JS, first)
    box = search_box(browser)
    box.send_keys(first)
    wait_until(lambda: first in browser.execute_script("return window.__searches"), message="the first query sent")
    # The first answer is held back; a newer query is typed meanwhile and answered first.
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(second)
    wait_until(lambda: result(browser, second_id), message="the newer query's result")
    wait_until(lambda: browser.execute_script("return window.__slowSettled"), message="the older answer settled")
    assert result(browser, first_id) is None, "the older query's answer must not replace the newer one"
    assert result(browser, second_id) is not None
    assert search_status(browser) == "1 result."
    searches = browser.execute_script("return window.__searches")
    assert searches[-1] == second
    # Typing fast sends one request per pause, not one per key.
    assert len(searches) < (len(first) + len(second)) / 2, searches


def test_search_results_by_keyboard_and_a_deleted_conversation_leaves_them(browser, parley_fast):
    word = unique("otter")
    first_id, _ = make_conversation(parley_fast, "Otters one", [f"The {word} swims"])
    second_id, _ = make_conversation(parley_fast, "Otters two", [f"The {word} dives"])
    open_page(browser, parley_fast.base)
    live_ready(browser)
    box = search_box(browser)
    box.send_keys(word)
    wait_until(lambda: result(browser, first_id) and result(browser, second_id), message="both results")
    assert search_status(browser) == "2 results."
    links = browser.find_elements(By.CSS_SELECTOR, "#search-results a")
    active = lambda: browser.switch_to.active_element
    box.send_keys(Keys.ARROW_DOWN)
    assert active() == links[0]
    active().send_keys(Keys.ARROW_DOWN)
    assert active() == links[1]
    active().send_keys(Keys.ARROW_UP)
    assert active() == links[0]
    active().send_keys(Keys.ARROW_UP)
    assert active() == box
    # Enter on a result opens it.
    box.send_keys(Keys.ARROW_DOWN)
    opened = active().find_element(By.XPATH, "..").get_attribute("data-id")
    active().send_keys(Keys.ENTER)
    wait_until(lambda: browser.current_url.endswith(f"#/c/{opened}"), message="the result opened by keyboard")
    # A conversation deleted elsewhere leaves the results, and the count follows.
    gone, kept = (first_id, second_id) if opened == second_id else (second_id, first_id)
    parley_fast.api("DELETE", f"/api/conversations/{gone}")
    wait_until(lambda: result(browser, gone) is None, message="the deleted conversation gone from the results")
    assert result(browser, kept) is not None
    assert search_status(browser) == "1 result."


# MARK: - Pin and archive

def test_pin_moves_to_the_pinned_group_and_survives_reload_and_archive_hides(browser, parley_fast):
    target_id, _ = make_conversation(parley_fast, "Keep this one handy", [])
    other_id, _ = make_conversation(parley_fast, "An ordinary conversation", [])
    try:
        open_page(browser, parley_fast.base, f"/#/c/{target_id}")
        wait_until(lambda: browser.find_element(By.ID, "conversation-title").text == "Keep this one handy",
                   message="the conversation open")
        wait_until(lambda: listed_in(browser, target_id) == "list", message="listed")
        assert menu_label(browser, "pin") == "Pin"
        conversation_action(browser, "pin")
        wait_until(lambda: listed_in(browser, target_id) == "pinned", message="moved to the Pinned group")
        assert menu_label(browser, "pin") == "Unpin"
        assert browser.find_element(By.ID, "pinned-heading").is_displayed()
        assert browser.find_element(By.ID, "list-heading").get_attribute("textContent") == "Recent"
        assert parley_fast.api("GET", f"/api/conversations/{target_id}")["pinned"] is True
        assert "pinned" in browser.find_element(By.ID, "announcer").text
        # A reload lists it first, in the Pinned group, and the button says Unpin.
        browser.refresh()
        wait_until(lambda: listed_in(browser, target_id) == "pinned", message="still pinned after reload")
        wait_until(lambda: menu_label(browser, "pin") == "Unpin", message="Unpin after reload")
        # The Pinned group loads first, then the rest's first page.
        wait_until(lambda: listed_in(browser, other_id) == "list", message="the rest listed after reload")
        first = browser.execute_script("return document.querySelector('#list-view li').dataset.id")
        assert browser.execute_script(
            "return document.querySelector('#pinned-list').compareDocumentPosition("
            "document.querySelector(`#conversation-list li[data-id='${arguments[0]}']`)) & 4", other_id)
        assert listed_in(browser, first) == "pinned"

        # Archive: it leaves the list but stays open.
        conversation_action(browser, "archive")
        wait_until(lambda: listed_in(browser, target_id) is None, message="hidden from the list")
        assert menu_label(browser, "archive") == "Unarchive"
        assert browser.current_url.endswith(f"#/c/{target_id}")
        assert browser.find_element(By.ID, "conversation-title").text == "Keep this one handy"
        assert parley_fast.api("GET", f"/api/conversations/{target_id}")["archived"] is True
        # Show archived lists only the archived ones.
        toggle = browser.find_element(By.ID, "show-archived")
        toggle.click()
        assert toggle.get_attribute("aria-pressed") == "true"
        wait_until(lambda: listed_in(browser, target_id) == "list", message="listed under Show archived")
        assert browser.find_element(By.ID, "list-heading").get_attribute("textContent") == "Archived"
        assert listed_in(browser, other_id) is None
        assert not browser.find_element(By.ID, "pinned-list").is_displayed()
        # Searching in the archived view searches the archived conversations.
        search_box(browser).send_keys("handy")
        wait_until(lambda: result(browser, target_id), message="the archived conversation found")
        search_box(browser).send_keys(Keys.ESCAPE)
        wait_until(lambda: list_shown(browser), message="the archived list back")
        # Unarchive from the archived view: it leaves that list; back in the normal view, it is pinned again.
        conversation_action(browser, "archive")
        wait_until(lambda: listed_in(browser, target_id) is None, message="gone from the archived list")
        assert menu_label(browser, "archive") == "Archive"
        toggle.click()
        assert toggle.get_attribute("aria-pressed") == "false"
        wait_until(lambda: listed_in(browser, target_id) == "pinned", message="back in the Pinned group")
        conversation_action(browser, "pin")
        wait_until(lambda: listed_in(browser, target_id) == "list", message="unpinned")
        assert parley_fast.api("GET", f"/api/conversations/{target_id}")["pinned"] is False
    finally:
        parley_fast.api("PATCH", f"/api/conversations/{target_id}", {"pinned": False, "archived": False})


def test_a_change_made_through_the_api_moves_the_item_live(browser, parley_fast):
    """Another tab (here: the API) pins and archives: the list follows without a reload."""
    moved_id, _ = make_conversation(parley_fast, "Moved elsewhere", [])
    open_id, _ = make_conversation(parley_fast, "Open here", [])
    try:
        open_page(browser, parley_fast.base, f"/#/c/{open_id}")
        live_ready(browser)
        wait_until(lambda: listed_in(browser, moved_id) == "list", message="listed")
        parley_fast.api("PATCH", f"/api/conversations/{moved_id}", {"pinned": True})
        wait_until(lambda: listed_in(browser, moved_id) == "pinned", message="moved to Pinned live")
        parley_fast.api("PATCH", f"/api/conversations/{moved_id}", {"archived": True})
        wait_until(lambda: listed_in(browser, moved_id) is None, message="hidden live once archived")
        parley_fast.api("PATCH", f"/api/conversations/{moved_id}", {"archived": False, "pinned": False})
        wait_until(lambda: listed_in(browser, moved_id) == "list", message="back live once unarchived")
        # The open conversation's buttons follow too.
        parley_fast.api("PATCH", f"/api/conversations/{open_id}", {"pinned": True, "archived": True})
        wait_until(lambda: menu_label(browser, "pin") == "Unpin"
                   and menu_label(browser, "archive") == "Unarchive", message="the menu follows")
        assert listed_in(browser, open_id) is None
        assert browser.find_element(By.ID, "conversation-title").text == "Open here"
    finally:
        for conversation_id in (moved_id, open_id):
            parley_fast.api("PATCH", f"/api/conversations/{conversation_id}", {"pinned": False, "archived": False})


# MARK: - Fork

def test_fork_at_a_middle_message_opens_a_copy_up_to_it(browser, parley_fast):
    original_id, ids = make_conversation(parley_fast, "Long talk", ["First question", "Second question"])
    before = parley_fast.api("GET", f"/api/conversations/{original_id}")
    open_page(browser, parley_fast.base, f"/#/c/{original_id}")
    wait_until(lambda: len(messages(browser)) == 4, message="the conversation")
    middle = browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{ids[1]}']")
    click_action(browser, middle, "fork")
    wait_until(lambda: "#/c/" in browser.current_url and not browser.current_url.endswith(original_id),
               message="the new conversation opened")
    fork_id = browser.current_url.split("#/c/")[1]
    wait_until(lambda: len(messages(browser)) == 2 and browser.find_element(By.ID, "conversation-title").text
               == "Fork of Long talk", message="the fork shown")
    shown = [el.find_element(By.CSS_SELECTOR, ".message-body").text for el in messages(browser)]
    assert shown[0] == "First question"
    forked = parley_fast.api("GET", f"/api/conversations/{fork_id}")
    assert [m["content"] for m in forked["messages"]] == [m["content"] for m in before["messages"][:2]]
    assert [m["role"] for m in forked["messages"]] == ["user", "assistant"]
    assert not set(m["id"] for m in forked["messages"]) & set(ids), "copies, not the same messages"
    # It is listed and marked current; the announcement says what happened.
    wait_until(lambda: browser.find_element(By.CSS_SELECTOR, f"#conversation-list li[data-id='{fork_id}'] a")
               .get_attribute("aria-current") == "page", message="the fork listed as current")
    assert "Forked" in browser.find_element(By.ID, "announcer").text
    assert browser.switch_to.active_element.get_attribute("id") == "input", "the focus goes to the composer"
    # The original is unchanged.
    after = parley_fast.api("GET", f"/api/conversations/{original_id}")
    assert [m["id"] for m in after["messages"]] == [m["id"] for m in before["messages"]]
    assert after["current_leaf_id"] == before["current_leaf_id"]
    assert after["title"] == "Long talk"
