"""The page in team mode (PARLEY_AUTH=on): the sign-in form on every 401, the user menu, sign-out,
API tokens and sessions, the admin's Users screen, and one member's conversations hidden from
another. In local mode none of it shows."""
import urllib.error

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from cut_proxy import CutProxy
from conftest import TEAM_ADMIN, assert_shows_stored, last_assistant_id, messages, open_page, screenshot, \
    send_message, wait_idle, wait_until

# Chromium logs every 401 and 429 answer as a console error; they are the point of these tests.
ALLOWED = ["status of 401", "status of 429"]


# MARK: - Helpers

def status_of(server, path, headers):
    try:
        server.api("GET", path, headers=headers)
        return 200
    except urllib.error.HTTPError as error:
        return error.code


def shown(driver, element_id):
    return driver.execute_script(
        "const e = document.getElementById(arguments[0]); return !!e && !e.hidden && e.offsetParent !== null;",
        element_id)


def start_signed_out(driver, server, path="/"):
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(server.base + path)
    wait_until(lambda: shown(driver, "signin"), message="the sign-in form")


def sign_in(driver, username, password):
    """Fills the shown form; returns once the chat is back, signed in."""
    field = driver.find_element(By.ID, "signin-username")
    field.clear()
    field.send_keys(username)
    driver.find_element(By.ID, "signin-password").send_keys(password, Keys.ENTER)
    wait_until(lambda: not shown(driver, "signin") and shown(driver, "account") and driver.execute_script(
        "return document.getElementById('model').options.length > 0"), message="signed in")


def open_menu_item(driver, label):
    driver.find_element(By.ID, "account-button").click()
    item = driver.find_element(By.XPATH, f"//div[@id='account-menu']/button[normalize-space()='{label}']")
    wait_until(item.is_displayed, message="the account menu")
    item.click()


def sign_out(driver):
    open_menu_item(driver, "Sign out")
    wait_until(lambda: shown(driver, "signin"), message="the sign-in form after signing out")


def session_cookie(driver):
    for cookie in driver.get_cookies():
        if cookie["name"] == "parley_session":
            return f"parley_session={cookie['value']}"
    return None


def add_user_on_page(driver, username, password, display_name=""):
    dialog = driver.find_element(By.ID, "users-dialog")
    dialog.find_element(By.ID, "user-username").send_keys(username)
    if display_name:
        dialog.find_element(By.ID, "user-display-name").send_keys(display_name)
    dialog.find_element(By.ID, "user-password").send_keys(password)
    dialog.find_element(By.CSS_SELECTOR, "#user-form button[type='submit']").click()
    return wait_until(lambda: dialog.find_element(By.XPATH, f".//tbody/tr[.//span[@class='username' and text()='{username}']]"),
                      message=f"{username} in the users list")


# MARK: - Local mode

def test_local_mode_shows_no_account_ui(browser, parley_fast):
    open_page(browser, parley_fast.base)
    send_message(browser, "No accounts here")
    wait_idle(browser)
    assert not shown(browser, "signin")
    assert not shown(browser, "account")
    assert browser.execute_script("return document.getElementById('account-name').textContent") == ""


# MARK: - Signing in and out

def test_sign_in_chat_sign_out(browser, parley_team, request):
    request.node.allowed_console = ALLOWED
    start_signed_out(browser, parley_team)
    assert not shown(browser, "app"), "the chat is hidden behind the form"
    assert browser.switch_to.active_element.get_attribute("id") == "signin-username"
    # A wrong password is said inline, and the form stays.
    browser.find_element(By.ID, "signin-username").send_keys(TEAM_ADMIN[0])
    browser.find_element(By.ID, "signin-password").send_keys("wrong password", Keys.ENTER)
    wait_until(lambda: "Wrong username or password" in browser.find_element(By.ID, "signin-error").text,
               message="the inline error")
    assert browser.find_element(By.ID, "signin-password").get_attribute("value") == ""
    sign_in(browser, *TEAM_ADMIN)
    assert browser.find_element(By.ID, "account-name").text == TEAM_ADMIN[0]
    # Chat as usual.
    send_message(browser, "Hello as a team member")
    answer_id = last_assistant_id(browser)
    wait_idle(browser)
    cookie = session_cookie(browser)
    assert cookie, "the session cookie is set"
    assert_shows_stored(browser, parley_team.with_headers({"Cookie": cookie}), answer_id)
    # The page holds no secret: the cookie is HttpOnly.
    assert "parley_session" not in browser.execute_script("return document.cookie")
    assert browser.execute_script("return document.querySelectorAll('[style]').length") == 0
    sign_out(browser)
    assert not shown(browser, "app")
    assert "#/c/" not in browser.current_url, "the next person does not land in this conversation"
    assert status_of(parley_team, "/api/conversations", {"Cookie": cookie}) == 401, "ended on the server"
    browser.refresh()
    wait_until(lambda: shown(browser, "signin"), message="the form after a reload")
    assert not shown(browser, "app")
    assert not messages(browser)


def test_a_deep_link_signs_in_to_its_conversation(browser, parley_team, request):
    request.node.allowed_console = ALLOWED
    cookie = parley_team.sign_in(*TEAM_ADMIN)
    conversation = parley_team.api("POST", "/api/conversations", {"title": "Linked"}, headers={"Cookie": cookie})
    start_signed_out(browser, parley_team, f"/#/c/{conversation['id']}")
    assert conversation["id"] in browser.current_url, "the link is kept while signing in"
    sign_in(browser, *TEAM_ADMIN)
    wait_until(lambda: browser.find_element(By.ID, "conversation-title").text == "Linked",
               message="the linked conversation")


def test_a_session_ended_elsewhere_brings_back_the_form(browser, parley_team, request):
    request.node.allowed_console = ALLOWED
    start_signed_out(browser, parley_team)
    sign_in(browser, *TEAM_ADMIN)
    wait_until(lambda: browser.execute_script("return document.documentElement.dataset.live === 'ready'"),
               message="the tab's user event stream")
    # The session ends behind the page's back (another tab signs out). The tab's event stream ends with
    # it, and its reconnect's 401 brings the form back without the person doing anything.
    browser.execute_script("return fetch('/api/auth/logout', {method: 'POST'}).then((r) => r.status)")
    wait_until(lambda: shown(browser, "signin"), message="the form after the session ended")
    sign_in(browser, *TEAM_ADMIN)


def test_a_stream_refused_after_reconnecting_brings_back_the_form(browser, parley_team_slow, request):
    # EventSource cannot see the 401 of its reconnection: the page asks /api/auth/me instead.
    request.node.allowed_console = ALLOWED + ["/stream", "/api/events", "ERR_CONNECTION", "ERR_EMPTY_RESPONSE", "/api/auth/me"]
    proxy = CutProxy(int(parley_team_slow.base.rsplit(":", 1)[1]))
    try:
        start_signed_out(browser, proxy)
        sign_in(browser, *TEAM_ADMIN)
        send_message(browser, "Sign me out mid-answer")
        answer = messages(browser, "assistant")[-1]
        wait_until(lambda: len(answer.text) > 40, message="some streamed text")
        cookie = session_cookie(browser)
        proxy.cut()
        parley_team_slow.api("POST", "/api/auth/logout", headers={"Cookie": cookie})
        proxy.restore()
        wait_until(lambda: shown(browser, "signin"), timeout=20, message="the form after the stream's 401")
    finally:
        proxy.close()


def test_too_many_failed_sign_ins_say_how_long_to_wait(browser, parley_team_limited, request):
    request.node.allowed_console = ALLOWED
    start_signed_out(browser, parley_team_limited)
    error = browser.find_element(By.ID, "signin-error")
    for attempt in range(4):
        browser.execute_script("document.getElementById('signin-error').textContent = ''")
        name = browser.find_element(By.ID, "signin-username")
        name.clear()
        name.send_keys("mallory")
        browser.find_element(By.ID, "signin-password").send_keys(f"guess {attempt}", Keys.ENTER)
        wait_until(lambda: error.text, message=f"the answer to attempt {attempt}")
        if "Too many" in error.text:
            break
    assert "Too many failed sign-ins" in error.text and "Try again in" in error.text, error.text
    assert browser.find_element(By.ID, "signin-submit").get_attribute("disabled")


# MARK: - Two users

def test_a_second_user_sees_none_of_the_first_users_conversations(browser, parley_team, request):
    request.node.allowed_console = ALLOWED + ["status of 404"]
    start_signed_out(browser, parley_team)
    sign_in(browser, *TEAM_ADMIN)
    send_message(browser, "A secret of the admin")
    wait_idle(browser)
    first_url = browser.current_url
    assert "#/c/" in first_url
    # The admin adds a member on the Users screen.
    open_menu_item(browser, "Users")
    row = add_user_on_page(browser, "bea", "bea's password 1", "Bea")
    wait_until(lambda: "conversation" in row.find_element(By.CSS_SELECTOR, ".usage").text.lower()
               or row.find_element(By.CSS_SELECTOR, ".usage").text == "None", message="bea's usage")
    admin_row = browser.find_element(By.XPATH, "//tbody[@id='user-list']/tr[.//span[text()='You']]")
    assert not admin_row.find_elements(By.TAG_NAME, "a"), "no way into anyone's conversations"
    browser.find_element(By.CSS_SELECTOR, "#users-dialog button[data-close]").click()
    sign_out(browser)
    sign_in(browser, "bea", "bea's password 1")
    assert browser.find_element(By.ID, "account-name").text == "Bea"
    wait_until(lambda: browser.find_element(By.ID, "conversation-list-status").text == "No conversations yet.",
               message="an empty list for bea")
    assert not browser.find_elements(By.CSS_SELECTOR, "#conversation-list li")
    assert not shown(browser, "open-users"), "a member has no Users screen"
    # The admin's conversation by its URL: not found, and nothing of it on the page.
    browser.get(first_url)
    wait_until(lambda: "not found" in browser.find_element(By.ID, "route-notice").text.lower(),
               message="not found")
    assert not messages(browser)
    assert "secret" not in browser.find_element(By.TAG_NAME, "body").text


def test_admin_disables_enables_promotes_and_resets_a_user(browser, parley_team, request, artifacts):
    request.node.allowed_console = ALLOWED
    start_signed_out(browser, parley_team)
    sign_in(browser, *TEAM_ADMIN)
    open_menu_item(browser, "Users")
    row_xpath = "//tbody[@id='user-list']/tr[.//span[@class='username' and text()='cy']]"
    add_user_on_page(browser, "cy", "cy's first password")
    row = lambda: browser.find_element(By.XPATH, row_xpath)
    row().find_element(By.CSS_SELECTOR, "button[aria-label='Disable cy']").click()
    wait_until(lambda: "Disabled" in row().text, message="cy disabled")
    with pytest.raises(urllib.error.HTTPError):
        parley_team.sign_in("cy", "cy's first password")
    row().find_element(By.CSS_SELECTOR, "button[aria-label='Enable cy']").click()
    wait_until(lambda: "Active" in row().text, message="cy enabled")
    row().find_element(By.CSS_SELECTOR, "button[aria-label='Reset password of cy']").click()
    browser.find_element(By.ID, "reset-password").send_keys("cy's second password", Keys.ENTER)
    wait_until(lambda: "reset" in browser.find_element(By.ID, "users-status").text, message="the reset said")
    parley_team.sign_in("cy", "cy's second password")
    select = row().find_element(By.CSS_SELECTOR, "select[aria-label='Role of cy']")
    select.find_element(By.CSS_SELECTOR, "option[value='admin']").click()
    wait_until(lambda: row().find_element(By.CSS_SELECTOR, "select").get_attribute("value") == "admin"
               and "admin" in browser.find_element(By.ID, "users-status").text, message="cy an admin")
    screenshot(browser, artifacts, "team-users")
    # At phone width the screen still fits without scrolling sideways.
    browser.set_window_size(390, 844)
    screenshot(browser, artifacts, "team-users-phone")
    assert browser.execute_script(
        "const d = document.getElementById('users-dialog'); return d.scrollWidth <= d.clientWidth + 1")


# MARK: - Tokens, sessions, password

def test_tokens_are_created_and_revoked_through_the_page(browser, parley_team, request, artifacts):
    request.node.allowed_console = ALLOWED
    start_signed_out(browser, parley_team)
    sign_in(browser, *TEAM_ADMIN)
    open_menu_item(browser, "API tokens")
    browser.find_element(By.ID, "token-name").send_keys("my script", Keys.ENTER)
    secret = wait_until(lambda: browser.find_element(By.ID, "token-secret-value").get_attribute("value"),
                        message="the new token")
    assert browser.find_element(By.ID, "token-copy").is_displayed()
    screenshot(browser, artifacts, "team-token-created")
    row = wait_until(lambda: browser.find_element(By.XPATH, "//tbody[@id='token-list']/tr[td[text()='my script']]"),
                     message="the token listed")
    bearer = {"Authorization": f"Bearer {secret}"}
    assert status_of(parley_team, "/api/conversations", bearer) == 200
    row.find_element(By.CSS_SELECTOR, "button[aria-label='Revoke token my script']").click()
    wait_until(lambda: not browser.find_elements(By.XPATH, "//tbody[@id='token-list']/tr[td[text()='my script']]"),
               message="the token gone from the list")
    assert status_of(parley_team, "/api/conversations", bearer) == 401
    # Shown once: closing the dialog (Escape) forgets the secret; the focus goes back to the menu button.
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_until(lambda: not browser.find_element(By.ID, "tokens-dialog").get_attribute("open"), message="closed")
    assert browser.find_element(By.ID, "token-secret-value").get_attribute("value") == ""
    assert browser.switch_to.active_element.get_attribute("id") == "account-button"


def test_sessions_list_marks_this_one_and_revokes_another(browser, parley_team, request):
    request.node.allowed_console = ALLOWED
    start_signed_out(browser, parley_team)
    sign_in(browser, *TEAM_ADMIN)
    other = parley_team.sign_in(*TEAM_ADMIN, agent="curl/8.5.0")
    open_menu_item(browser, "Sessions")
    current = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, "#session-list tr.is-current"),
                         message="this session marked")
    assert "This session" in current.text
    revoke = wait_until(lambda: browser.find_element(By.XPATH, "//tbody[@id='session-list']/tr[contains(., 'curl')]//button"),
                        message="the other session")
    assert status_of(parley_team, "/api/conversations", {"Cookie": other}) == 200
    revoke.click()
    wait_until(lambda: not browser.find_elements(By.XPATH, "//tbody[@id='session-list']/tr[contains(., 'curl')]"),
               message="the other session gone")
    assert status_of(parley_team, "/api/conversations", {"Cookie": other}) == 401


def test_password_change_needs_matching_new_passwords(browser, parley_team, request):
    request.node.allowed_console = ALLOWED
    admin = parley_team.sign_in(*TEAM_ADMIN)
    try:
        parley_team.api("POST", "/api/users", {"username": "dee", "password": "dee's old password", "role": "member"},
                        headers={"Cookie": admin})
    except urllib.error.HTTPError as error:
        assert error.code == 409, error
    start_signed_out(browser, parley_team)
    sign_in(browser, "dee", "dee's old password")
    open_menu_item(browser, "Change password")
    browser.find_element(By.ID, "password-current").send_keys("dee's old password")
    browser.find_element(By.ID, "password-new").send_keys("dee's new password")
    browser.find_element(By.ID, "password-repeat").send_keys("something else", Keys.ENTER)
    wait_until(lambda: "differ" in browser.find_element(By.ID, "password-status").text, message="the mismatch")
    repeat = browser.find_element(By.ID, "password-repeat")
    repeat.clear()
    repeat.send_keys("dee's new password", Keys.ENTER)
    wait_until(lambda: "Password changed" in browser.find_element(By.ID, "password-status").text,
               message="the change said")
    parley_team.sign_in("dee", "dee's new password")
