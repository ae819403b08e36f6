"""Organising, when things change under it: search results follow renames, archives and deletions
(even one told while the search request is in flight) and say when they are capped; a failed list load
offers Retry; a fork or a pin that ends after the person moved on does not take them back; the open
conversation's actions and the results' current mark follow what is open; Fork waits for the answer's end."""
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import conversation_action, menu_label, open_conversation_menu, messages, open_page, wait_idle, wait_until
from test_organise import (api_error, click_action, live_ready, make_conversation, result, search_box, search_status,
                           unique)

# Holds the page's requests whose method is `method` and whose path and query match `pattern`:
# `hold` sends one only once `window.__release()` is called; `answer-later` sends it at once but hands
# its answer to the page only after the release (`window.__answered` once the server answered); `fail`
# fails it as a network error. `window.__held` lists the requests caught.
HOLD_JS = """
const [method, pattern, mode] = arguments;
window.__held = [];
window.__answered = false;
let release;
const gate = new Promise((resolve) => { release = resolve; });
window.__release = () => release();
const real = window.fetch.bind(window);
window.fetch = (url, init) => {
  const u = new URL(String(url), location.href);
  if (((init && init.method) || 'GET') !== method || !new RegExp(pattern).test(u.pathname + u.search)) {
    return real(url, init);
  }
  window.__held.push(u.pathname + u.search);
  if (mode === 'fail') return Promise.reject(new TypeError('Failed to fetch (held by the test)'));
  if (mode === 'answer-later') {
    return real(url, init).then((response) => { window.__answered = true; return gate.then(() => response); });
  }
  return gate.then(() => real(url, init));
};
"""

# Before the page's own scripts: the first list request (the Pinned group's) fails as a network error,
# after a moment (as a dropped connection would: a failure at once would be retried by the list's own
# first look at its sentinel).
FAIL_FIRST_LIST_JS = """
const real = window.fetch.bind(window);
let failed = false;
window.fetch = (url, init) => {
  const u = new URL(String(url), location.href);
  if (!failed && u.pathname === '/api/conversations' && !u.searchParams.has('q') && !(init && init.method && init.method !== 'GET')) {
    failed = true;
    return new Promise((resolve, reject) => setTimeout(() => reject(new TypeError('Failed to fetch (test)')), 500));
  }
  return real(url, init);
};
"""


def hold(driver, method, pattern, mode="hold"):
    driver.execute_script(HOLD_JS, method, pattern, mode)


def wait_held(driver, what):
    return wait_until(lambda: driver.execute_script("return window.__held.length > 0"), message=f"{what} requested")


def release(driver):
    driver.execute_script("window.__release()")


def title_of(driver):
    return driver.find_element(By.ID, "conversation-title").text


def in_list(driver, conversation_id):
    """Whether the conversation list holds it (shown or not: search results may hide the list)."""
    return driver.execute_script(
        "return document.querySelector(`#list-view li[data-id=\"${arguments[0]}\"]`) !== null", conversation_id)


# MARK: - Search results follow changes

def test_search_results_follow_a_rename_here_and_a_rename_and_an_archive_elsewhere(browser, parley_fast):
    word = unique("heron")
    first_id, _ = make_conversation(parley_fast, "Herons at dawn", [f"The {word} waits"])
    second_id, _ = make_conversation(parley_fast, "Herons at dusk", [f"The {word} flies"])
    try:
        open_page(browser, parley_fast.base)
        live_ready(browser)
        search_box(browser).send_keys(word)
        wait_until(lambda: result(browser, first_id) and result(browser, second_id), message="both results")
        result_title = lambda conversation_id: result(browser, conversation_id).find_element(By.CSS_SELECTOR, ".result-title").text
        # Renamed in another tab (the API): the result's title follows.
        parley_fast.api("PATCH", f"/api/conversations/{first_id}", {"title": "Renamed elsewhere"})
        wait_until(lambda: result_title(first_id) == "Renamed elsewhere", message="the result renamed live")
        # Archived in another tab: it leaves the results (they show the unarchived ones), the count follows.
        parley_fast.api("PATCH", f"/api/conversations/{second_id}", {"archived": True})
        wait_until(lambda: result(browser, second_id) is None, message="the archived conversation gone from the results")
        assert search_status(browser) == "1 result."
        # Renamed here, with the results still shown.
        result(browser, first_id).find_element(By.TAG_NAME, "a").click()
        wait_until(lambda: title_of(browser) == "Renamed elsewhere", message="the conversation opened")
        conversation_action(browser, "rename")
        field = browser.find_element(By.ID, "rename-input")
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys("Renamed here", Keys.ENTER)
        wait_until(lambda: result_title(first_id) == "Renamed here", message="the result renamed by Rename")
    finally:
        parley_fast.api("PATCH", f"/api/conversations/{second_id}", {"archived": False})


def test_a_conversation_deleted_while_a_search_is_in_flight_does_not_come_back(browser, parley_fast):
    word = unique("puffin")
    gone_id, _ = make_conversation(parley_fast, "Puffins one", [f"The {word} dives"])
    kept_id, _ = make_conversation(parley_fast, "Puffins two", [f"The {word} nests"])
    open_page(browser, parley_fast.base)
    live_ready(browser)
    wait_until(lambda: in_list(browser, gone_id), message="listed")
    # The server answers (with both) before the deletion; the page gets that answer only after it.
    hold(browser, "GET", r"^/api/conversations\?q=", "answer-later")
    search_box(browser).send_keys(word)
    wait_until(lambda: browser.execute_script("return window.__answered"), message="the search answered")
    parley_fast.api("DELETE", f"/api/conversations/{gone_id}")
    wait_until(lambda: not in_list(browser, gone_id), message="the deletion told to the page")
    release(browser)
    wait_until(lambda: result(browser, kept_id), message="the results")
    assert result(browser, gone_id) is None, "a conversation deleted meanwhile must not come back"
    assert search_status(browser) == "1 result."


def test_the_count_says_when_only_the_first_results_are_shown(browser, parley_fast):
    word = unique("lemming")
    ids = [parley_fast.api("POST", "/api/conversations", {"title": f"{word} number {n}"})["id"] for n in range(50)]
    try:
        open_page(browser, parley_fast.base)
        search_box(browser).send_keys(word)
        wait_until(lambda: "50 results" in search_status(browser), message="the capped count")
        assert "only the first 50 are shown, more may match" in search_status(browser), search_status(browser)
        # Under the cap, the count is the whole answer.
        parley_fast.api("DELETE", f"/api/conversations/{ids[0]}")
        search_box(browser).send_keys(Keys.ESCAPE)
        search_box(browser).send_keys(word)
        wait_until(lambda: search_status(browser) == "49 results.", message="an uncapped count")
    finally:
        for conversation_id in ids[1:]:
            parley_fast.api("DELETE", f"/api/conversations/{conversation_id}")


def test_the_results_mark_no_conversation_after_a_failed_open(browser, parley_fast):
    word = unique("marmot")
    first_id, _ = make_conversation(parley_fast, "Marmots one", [f"The {word} whistles"])
    second_id, _ = make_conversation(parley_fast, "Marmots two", [f"The {word} sleeps"])
    open_page(browser, parley_fast.base, f"/#/c/{first_id}")
    wait_until(lambda: title_of(browser) == "Marmots one", message="the first open")
    search_box(browser).send_keys(word)
    current = lambda: browser.execute_script(
        "return [...document.querySelectorAll('#search-results a[aria-current]')].map((a) => a.parentElement.dataset.id)")
    wait_until(lambda: current() == [first_id], message="the open one marked")
    hold(browser, "GET", f"^/api/conversations/{second_id}$", "fail")
    result(browser, second_id).find_element(By.TAG_NAME, "a").click()
    wait_until(lambda: browser.find_element(By.ID, "route-notice").is_displayed(), message="the failed open's notice")
    assert browser.current_url.endswith("#/")
    assert current() == [], "no result is marked open"


# MARK: - The conversation list

def test_a_failed_list_load_shows_retry_and_recovers(browser, parley_fast):
    conversation_id, _ = make_conversation(parley_fast, "Listed after a retry", [])
    script = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FAIL_FIRST_LIST_JS})
    try:
        open_page(browser, parley_fast.base)
        status = browser.find_element(By.ID, "conversation-list-status")
        retry = browser.find_element(By.ID, "conversation-list-retry")
        wait_until(lambda: status.text == "Could not load conversations." and retry.is_displayed(), message="the failure")
        assert not in_list(browser, conversation_id)
        retry.click()
        wait_until(lambda: in_list(browser, conversation_id), message="listed after Retry")
        wait_until(lambda: not retry.is_displayed(), message="Retry gone")
        assert status.text == ""
        # The focus Retry had goes to the list, not to the page's body.
        assert browser.switch_to.active_element.tag_name == "a"
        assert browser.execute_script("return document.activeElement.closest('#list-view') !== null")
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})


# MARK: - The open conversation moves on

def test_fork_finished_after_another_conversation_was_opened_does_not_navigate(browser, parley_fast):
    forked_id, ids = make_conversation(parley_fast, "Forked away", ["Question to fork"])
    other_id, _ = make_conversation(parley_fast, "Opened meanwhile", [])
    open_page(browser, parley_fast.base, f"/#/c/{forked_id}")
    wait_until(lambda: len(messages(browser)) == 2, message="the conversation")
    hold(browser, "POST", r"^/api/conversations/[^/]+/fork$")
    click_action(browser, messages(browser)[1], "fork")
    wait_held(browser, "the fork")
    browser.execute_script("location.hash = arguments[0]", f"#/c/{other_id}")
    wait_until(lambda: title_of(browser) == "Opened meanwhile", message="the other conversation open")
    release(browser)
    wait_until(lambda: "Forked" in browser.find_element(By.ID, "announcer").text, message="the fork announced")
    fork_id = wait_until(lambda: browser.execute_script(
        "const a = [...document.querySelectorAll('#conversation-list a')].find((a) => a.textContent === 'Fork of Forked away');"
        "return a && a.parentElement.dataset.id"), message="the fork listed")
    assert fork_id not in (forked_id, other_id)
    assert browser.current_url.endswith(f"#/c/{other_id}"), "the fork must not take the page away"
    assert title_of(browser) == "Opened meanwhile"


def test_pin_gives_the_focus_back_only_to_who_waited_for_it(browser, parley_fast):
    conversation_id, _ = make_conversation(parley_fast, "Pinned slowly", [])
    try:
        open_page(browser, parley_fast.base, f"/#/c/{conversation_id}")
        wait_until(lambda: title_of(browser) == "Pinned slowly", message="the conversation open")
        menu_button = browser.find_element(By.ID, "conversation-actions")
        # Waited for: the focus stays on the menu's button (the item chosen is gone with the menu).
        conversation_action(browser, "pin")
        wait_until(lambda: parley_fast.api("GET", f"/api/conversations/{conversation_id}")["pinned"], message="pinned")
        assert browser.switch_to.active_element == menu_button
        # Moved on to the search box while the PATCH was pending: the focus stays there.
        hold(browser, "PATCH", f"^/api/conversations/{conversation_id}$")
        conversation_action(browser, "pin")
        wait_held(browser, "the unpin")
        search_box(browser).click()
        release(browser)
        wait_until(lambda: not parley_fast.api("GET", f"/api/conversations/{conversation_id}")["pinned"],
                   message="unpinned")
        assert menu_label(browser, "pin") == "Pin"
        search_box(browser).click()
        assert browser.switch_to.active_element == search_box(browser), "the focus must not be taken back"
    finally:
        parley_fast.api("PATCH", f"/api/conversations/{conversation_id}", {"pinned": False})


def test_the_actions_hide_while_another_conversation_loads(browser, parley_fast):
    first_id, _ = make_conversation(parley_fast, "Shown first", [])
    second_id, _ = make_conversation(parley_fast, "Loaded slowly", [])
    open_page(browser, parley_fast.base, f"/#/c/{first_id}")
    wait_until(lambda: title_of(browser) == "Shown first", message="the first open")
    button = browser.find_element(By.ID, "conversation-actions")
    assert button.is_displayed()
    hold(browser, "GET", f"^/api/conversations/{second_id}$")
    browser.execute_script("location.hash = arguments[0]", f"#/c/{second_id}")
    wait_held(browser, "the second conversation")
    assert not button.is_displayed(), "no action may act on the conversation being left"
    release(browser)
    wait_until(lambda: title_of(browser) == "Loaded slowly", message="the second open")
    menu = open_conversation_menu(browser)
    assert [item.get_attribute("data-action") for item in menu.find_elements(By.CSS_SELECTOR, "[role='menuitem']")] == [
        "pin", "archive", "rename", "export-json", "export-markdown", "delete"]
    assert browser.find_element(By.ID, "export-json").get_attribute("href").endswith(
        f"/api/conversations/{second_id}/export?format=json")


def test_fork_is_hidden_while_the_answer_streams_and_a_refusal_is_shown(browser, parley_slower):
    conversation_id, _ = make_conversation(parley_slower, "Streaming fork", [])
    turn = parley_slower.api("POST", f"/api/conversations/{conversation_id}/messages", {"content": "Tell me a story"})
    answer_id = turn["assistant_message"]["id"]
    open_page(browser, parley_slower.base, f"/#/c/{conversation_id}")
    answer = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{answer_id}']"),
                        message="the streaming answer")
    # The server refuses to fork a streaming answer (409): the page does not offer it.
    status, refusal = api_error(parley_slower, "POST", f"/api/conversations/{conversation_id}/fork",
                                {"message_id": answer_id})
    assert status == 409
    fork = answer.find_element(By.CSS_SELECTOR, "button[data-action='fork']")
    assert answer.get_attribute("data-status") == "streaming" and not fork.is_displayed()
    question = messages(browser)[0]
    assert question.find_element(By.CSS_SELECTOR, "button[data-action='fork']").is_displayed()
    parley_slower.wait_finished(answer_id, timeout=60)
    wait_idle(browser)
    wait_until(lambda: fork.is_displayed(), message="Fork offered once the answer is done")
    # A refusal (the answer continued in another tab meanwhile) is shown on the message, which stays open.
    browser.execute_script(FORK_REFUSAL_JS, refusal)
    click_action(browser, answer, "fork")
    error = answer.find_element(By.CSS_SELECTOR, ".message-error")
    wait_until(lambda: error.is_displayed() and refusal["message"] in error.text, message="the 409 shown")
    assert browser.current_url.endswith(f"#/c/{conversation_id}")
    # Its Retry forks.
    error.find_element(By.CSS_SELECTOR, "button[data-action='retry']").click()
    wait_until(lambda: not browser.current_url.endswith(conversation_id), message="the fork opened")
    wait_until(lambda: len(messages(browser)) == 2, message="the fork's messages")


# Answers the page's next fork with the server's 409 (`arguments[0]`: its error body).
FORK_REFUSAL_JS = """
const refusal = arguments[0];
const real = window.fetch.bind(window);
let refused = false;
window.fetch = (url, init) => {
  if (!refused && /\\/fork$/.test(String(url))) {
    refused = true;
    return Promise.resolve(new Response(JSON.stringify({error: refusal}),
      {status: 409, headers: {'Content-Type': 'application/json'}}));
  }
  return real(url, init);
};
"""
