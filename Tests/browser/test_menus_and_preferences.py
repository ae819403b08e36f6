"""Issue 18, items 5, 6, 8 and 9: the top bar that fits (one "⋯" menu per conversation, in the top bar and
on each list item: a keyboard menu; the model picker's whole names; one row on a phone; the title not cut),
Chat settings as a dialog, the person's preferences (theme, send key, default model and system prompt,
kept on the server), import and export (a file that is not an export, the imported badge), and the
smaller items (the drawer's focus, the edit box's width, Show archived's state, the empty state, one
Retry on a failed answer, plural counts on the Users screen, the password hint, dark dialogs that dim).
Layout is checked at 1280x800 and 390x844, in light and dark; axe on each new menu and dialog."""
import json
import urllib.error
import urllib.request

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from axe_check import assert_accessible, set_color_scheme
from conftest import (TEAM_ADMIN, conversation_action, last_assistant_id, messages, open_conversation_menu, open_page,
                      screenshot, send_message, start_parley, wait_idle, wait_until)
from test_team import open_menu_item, sign_in, start_signed_out

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
SCHEMES = ("light", "dark")
DEFAULTS = {"theme": "system", "default_model": None, "default_system_prompt": None, "send_key": "enter"}
DARK_BG, LIGHT_BG = "rgb(23, 25, 28)", "rgb(255, 255, 255)"
MENU_ACTIONS = ["pin", "archive", "rename", "export-json", "export-markdown", "delete"]


@pytest.fixture(scope="module")
def parley_prefs(artifacts, fake_upstream):
    """Its own server: preferences are one set per user, and local mode has one user, so changing them
    on a shared server would change every later test's page."""
    server = start_parley("prefs", {"PARLEY_OPENAI_BASE_URL": fake_upstream.base_url, "PARLEY_OPENAI_MODELS": "fake,other",
                                    "PARLEY_DEMO_TOKENS_PER_SECOND": "300"})
    yield server
    server.stop()


@pytest.fixture
def clean_prefs(parley_prefs, browser):
    """Default preferences before and after, the browser's own scheme after."""
    parley_prefs.api("PATCH", "/api/preferences", DEFAULTS)
    yield parley_prefs
    parley_prefs.api("PATCH", "/api/preferences", DEFAULTS)
    set_color_scheme(browser, None)


@pytest.fixture(params=[(size, scheme) for size in SIZES for scheme in SCHEMES], ids=lambda p: f"{p[0]}-{p[1]}")
def layout(request, browser):
    size, scheme = request.param
    browser.set_window_size(*SIZES[size])
    set_color_scheme(browser, scheme)
    yield size, scheme
    set_color_scheme(browser, None)


def by_id(driver, element_id):
    return driver.find_element(By.ID, element_id)


def js(driver, script, *args):
    return driver.execute_script(script, *args)


def conversation(server, title, turns=1):
    created = server.api("POST", "/api/conversations", {"title": title})
    for index in range(turns):
        sent = server.api("POST", f"/api/conversations/{created['id']}/messages", {"content": f"Question {index}"})
        server.wait_finished(sent["assistant_message"]["id"])
    return created["id"]


def background(driver):
    return js(driver, "return getComputedStyle(document.body).backgroundColor")


# MARK: - Item 5: the top bar fits

def test_the_top_bar_is_one_row_with_the_whole_title_and_model_name(browser, parley_fast, layout, artifacts):
    """On the demo model's server: its label is the long one ("Demo model (built-in, no LLM)")."""
    size, scheme = layout
    cid = conversation(parley_fast, "How do I reverse a list?")
    try:
        check_top_bar(browser, parley_fast, cid, size, scheme, artifacts)
    finally:  # parley_fast is shared: its list stays as the other tests expect
        parley_fast.api("DELETE", f"/api/conversations/{cid}")


def check_top_bar(browser, server, cid, size, scheme, artifacts):
    open_page(browser, server.base, f"/#/c/{cid}")
    wait_until(lambda: by_id(browser, "conversation-title").text == "How do I reverse a list?", message="open")
    box = js(browser, """
        const bar = document.querySelector('.topbar');
        const shown = [...bar.querySelectorAll('button, select, h1')].filter((e) => e.offsetParent !== null);
        const rows = new Set(shown.map((e) => Math.round(e.getBoundingClientRect().top / 8)));
        const title = document.getElementById('conversation-title');
        const select = document.getElementById('model');
        // The width the picker takes when nothing limits it: what its whole label needs (its arrow too).
        const free = select.cloneNode(true);
        free.id = '';
        free.style.maxWidth = 'none';
        free.style.position = 'absolute';
        select.after(free);
        free.value = select.value;
        const needed = free.getBoundingClientRect().width;
        free.remove();
        const text = select.selectedOptions[0].textContent;
        return {height: bar.getBoundingClientRect().height, rows: rows.size, text, tooltip: select.title,
                titleCut: title.scrollWidth > title.clientWidth,
                room: select.getBoundingClientRect().width, needed,
                overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth};""")
    screenshot(browser, artifacts, f"topbar-{size}-{scheme}")
    assert box["rows"] <= 2 and box["height"] <= 52, f"one row: {box}"  # (rounding may split a row in two buckets)
    assert box["overflow"] <= 0, box
    assert box["text"] == "Demo model" and box["tooltip"] == "Demo model (built-in, no LLM)", box
    assert box["needed"] <= box["room"] + 1, f"the model's name shown whole: {box}"
    if size == "desktop":
        assert not box["titleCut"], f"a normal title is not cut at 1280 px: {box}"
    for removed in ("pin", "archive", "rename", "delete", "export-json"):
        assert not browser.find_elements(By.CSS_SELECTOR, f".topbar-tools > #{removed}"), removed


def test_the_conversation_menu_works_by_keyboard_and_passes_axe(browser, parley_prefs, layout):
    size, _ = layout
    cid = conversation(parley_prefs, "Menu by keyboard", turns=0)
    open_page(browser, parley_prefs.base, f"/#/c/{cid}")
    button = wait_until(lambda: by_id(browser, "conversation-actions").is_displayed()
                        and by_id(browser, "conversation-actions"), message="the menu button")
    assert button.get_attribute("aria-haspopup") == "menu"
    assert button.get_attribute("aria-expanded") == "false"
    js(browser, "arguments[0].focus()", button)
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    menu = by_id(browser, "conversation-menu")
    wait_until(menu.is_displayed, message="the menu open")
    assert menu.get_attribute("role") == "menu"
    assert button.get_attribute("aria-expanded") == "true"
    items = menu.find_elements(By.CSS_SELECTOR, "[role='menuitem']")
    assert [item.get_attribute("data-action") for item in items] == MENU_ACTIONS
    assert [item.text for item in items] == ["Pin", "Archive", "Rename…", "Export JSON", "Export Markdown", "Delete…"]
    active = lambda: browser.switch_to.active_element.get_attribute("data-action")
    assert active() == "pin", "the first item has the focus"
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert active() == "archive"
    browser.switch_to.active_element.send_keys(Keys.END)
    assert active() == "delete"
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert active() == "pin", "Down from the last wraps to the first"
    browser.switch_to.active_element.send_keys(Keys.ARROW_UP)
    assert active() == "delete"
    browser.switch_to.active_element.send_keys(Keys.HOME)
    assert active() == "pin"
    assert_accessible(browser, f"conversation menu open ({size})")
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_until(lambda: not menu.is_displayed(), message="Escape closes the menu")
    assert browser.switch_to.active_element == button, "the focus goes back to the menu's button"
    assert button.get_attribute("aria-expanded") == "false"
    # Arrow Up on the button opens it on the last item; a click elsewhere closes it.
    button.send_keys(Keys.ARROW_UP)
    wait_until(lambda: menu.is_displayed() and active() == "delete", message="opened on the last item")
    by_id(browser, "messages").click()
    wait_until(lambda: not menu.is_displayed(), message="a click outside closes the menu")
    # Enter on an item acts: Rename opens its dialog.
    open_conversation_menu(browser)
    menu.find_element(By.CSS_SELECTOR, "[data-action='rename']").send_keys(Keys.ENTER)
    wait_until(lambda: by_id(browser, "rename-dialog").get_attribute("open"), message="the rename dialog")
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)


def test_each_list_item_has_the_same_menu(browser, parley_prefs, layout):
    size, _ = layout
    target = conversation(parley_prefs, "Renamed from the list", turns=0)
    shown = conversation(parley_prefs, "The open one", turns=0)
    open_page(browser, parley_prefs.base, f"/#/c/{shown}")
    if size == "phone":
        by_id(browser, "toggle-sidebar").click()
        wait_until(lambda: by_id(browser, "sidebar").rect["x"] >= 0, message="the drawer")
    item = wait_until(lambda: browser.find_element(By.CSS_SELECTOR, f"#list-view li[data-id='{target}']"),
                      message="listed")
    button = item.find_element(By.CSS_SELECTOR, ".item-menu-button")
    assert button.get_attribute("aria-label") == "Actions for Renamed from the list"
    menu = open_conversation_menu(browser, target)
    assert [i.get_attribute("data-action") for i in menu.find_elements(By.CSS_SELECTOR, "[role='menuitem']")] == MENU_ACTIONS
    rect = js(browser, "const r = arguments[0].getBoundingClientRect(); return [r.left, r.right, innerWidth];", menu)
    assert rect[0] >= 0 and rect[1] <= rect[2] + 1, f"the menu is on screen: {rect}"
    assert_accessible(browser, f"list item menu open ({size})")
    menu.find_element(By.CSS_SELECTOR, "[data-action='pin']").click()
    wait_until(lambda: parley_prefs.api("GET", f"/api/conversations/{target}")["pinned"], message="pinned from the list")
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, f"#pinned-list li[data-id='{target}']"), message="moved")
    assert by_id(browser, "conversation-title").text == "The open one", "the open conversation stays"
    conversation_action(browser, "rename", target)
    field = wait_until(lambda: by_id(browser, "rename-dialog").get_attribute("open") and by_id(browser, "rename-input"),
                       message="the rename dialog")
    assert field.get_attribute("value") == "Renamed from the list"
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("Renamed in place", Keys.ENTER)
    wait_until(lambda: parley_prefs.api("GET", f"/api/conversations/{target}")["title"] == "Renamed in place",
               message="renamed")
    wait_until(lambda: "Renamed in place" in item.text, message="the list shows it")
    assert by_id(browser, "conversation-title").text == "The open one"
    parley_prefs.api("DELETE", f"/api/conversations/{target}")


# MARK: - Item 6: Chat settings is a dialog; preferences

def test_chat_settings_is_a_dialog_that_does_not_push_the_chat(browser, parley_prefs, layout):
    size, _ = layout
    cid = conversation(parley_prefs, "Settings dialog")
    open_page(browser, parley_prefs.base, f"/#/c/{cid}")
    toggle = by_id(browser, "system-toggle")
    wait_until(toggle.is_displayed, message="the Chat settings button")
    assert js(browser, "return arguments[0].textContent.includes('Chat settings')", toggle)
    assert toggle.accessible_name == "Chat settings"
    before = by_id(browser, "messages").rect["y"]
    toggle.click()
    dialog = by_id(browser, "settings-dialog")
    wait_until(lambda: dialog.get_attribute("open"), message="the dialog open")
    assert js(browser, "return arguments[0].matches(':modal')", dialog), "a modal dialog"
    assert by_id(browser, "messages").rect["y"] == before, "the chat is not pushed down"
    assert by_id(browser, "settings-heading").text == "Chat settings"
    assert_accessible(browser, f"chat settings dialog ({size})")
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_until(lambda: not dialog.get_attribute("open"), message="Escape closes it")
    assert browser.switch_to.active_element == toggle


def open_preferences(driver):
    by_id(driver, "open-preferences").click()
    dialog = by_id(driver, "preferences-dialog")
    wait_until(lambda: dialog.get_attribute("open") and by_id(driver, "preferences-model").find_elements(
        By.TAG_NAME, "option"), message="the preferences dialog")
    return dialog


def save_preferences(driver):
    driver.find_element(By.CSS_SELECTOR, "#preferences-form button[type='submit']").click()
    wait_until(lambda: by_id(driver, "preferences-status").text == "Saved.", message="saved")


@pytest.mark.parametrize("scheme, chosen, expected", [("light", "dark", DARK_BG), ("dark", "light", LIGHT_BG)])
def test_the_theme_applies_at_once_and_after_a_reload_against_the_browser(browser, clean_prefs, scheme, chosen,
                                                                         expected):
    set_color_scheme(browser, scheme)
    open_page(browser, clean_prefs.base)
    assert background(browser) == (LIGHT_BG if scheme == "light" else DARK_BG)
    open_preferences(browser)
    assert_accessible(browser, "preferences dialog")
    browser.find_element(By.CSS_SELECTOR, f"input[name='theme'][value='{chosen}']").click()
    assert background(browser) == expected, "a chosen theme shows at once"
    save_preferences(browser)
    assert clean_prefs.api("GET", "/api/preferences")["theme"] == chosen
    browser.find_element(By.ID, "preferences-close").click()
    assert js(browser, "return document.documentElement.dataset.theme") == chosen
    assert background(browser) == expected
    browser.refresh()
    wait_until(lambda: background(browser) == expected, message="the theme after a reload")
    # From the server, not only this browser's copy: another device (no copy) shows it too.
    js(browser, "localStorage.clear()")
    browser.refresh()
    wait_until(lambda: background(browser) == expected, message="the theme read from the server")
    assert_accessible(browser, f"chosen {chosen} theme over a {scheme} browser")
    set_color_scheme(browser, scheme)  # (axe's check ends on the browser's own scheme)
    # System again: the browser's scheme.
    open_preferences(browser)
    browser.find_element(By.CSS_SELECTOR, "input[name='theme'][value='system']").click()
    save_preferences(browser)
    browser.find_element(By.ID, "preferences-close").click()
    assert background(browser) == (LIGHT_BG if scheme == "light" else DARK_BG)


def test_a_theme_chosen_but_not_saved_is_put_back(browser, clean_prefs):
    set_color_scheme(browser, "light")
    open_page(browser, clean_prefs.base)
    open_preferences(browser)
    browser.find_element(By.CSS_SELECTOR, "input[name='theme'][value='dark']").click()
    assert background(browser) == DARK_BG
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait_until(lambda: background(browser) == LIGHT_BG, message="the saved theme back")
    assert clean_prefs.api("GET", "/api/preferences")["theme"] == "system"


def test_another_tab_changing_the_theme_shows_here_without_a_reload(browser, clean_prefs):
    set_color_scheme(browser, "light")
    open_page(browser, clean_prefs.base)
    wait_until(lambda: js(browser, "return document.documentElement.dataset.live === 'ready'"),
               message="the live stream")
    clean_prefs.api("PATCH", "/api/preferences", {"theme": "dark"})
    wait_until(lambda: background(browser) == DARK_BG, message="preferences_changed applied")


def test_new_conversations_use_the_default_model_and_system_prompt(browser, clean_prefs, fake_upstream):
    fake_upstream.mode = "ok"
    open_page(browser, clean_prefs.base)
    js(browser, "localStorage.removeItem('parley.model')")  # (the model last chosen in this browser)
    open_page(browser, clean_prefs.base)
    assert Select(by_id(browser, "model")).first_selected_option.get_attribute("value") == "openai:fake"
    open_preferences(browser)
    Select(by_id(browser, "preferences-model")).select_by_value("openai:other")
    by_id(browser, "preferences-prompt").send_keys("Answer in French.")
    save_preferences(browser)
    assert clean_prefs.api("GET", "/api/preferences") == {**DEFAULTS, "default_model": "openai:other",
                                                          "default_system_prompt": "Answer in French."}
    browser.find_element(By.ID, "preferences-close").click()
    wait_until(lambda: Select(by_id(browser, "model")).first_selected_option.get_attribute("value") == "openai:other",
               message="the fresh page takes the default model")
    assert "other" in by_id(browser, "empty-model").text, "the empty state names it"
    # The fresh page's Chat settings show the default prompt, and the first send uses both.
    by_id(browser, "system-toggle").click()
    wait_until(lambda: by_id(browser, "system-prompt").get_attribute("value") == "Answer in French.",
               message="the default prompt in Chat settings")
    by_id(browser, "system-cancel").click()
    send_message(browser, "Bonjour")
    cid = wait_until(lambda: "#/c/" in browser.current_url and browser.current_url.split("#/c/")[1], message="created")
    stored = clean_prefs.api("GET", f"/api/conversations/{cid}")
    assert stored["model"] == "openai:other" and stored["system_prompt"] == "Answer in French.", stored
    wait_idle(browser)
    # After a reload (another device) the next new conversation takes them too.
    browser.get(clean_prefs.base + "/#/")
    browser.refresh()
    open_page(browser, clean_prefs.base)
    wait_until(lambda: Select(by_id(browser, "model")).first_selected_option.get_attribute("value") == "openai:other",
               message="the default model after a reload")


def test_the_send_key_preference_makes_enter_a_new_line(browser, clean_prefs):
    clean_prefs.api("PATCH", "/api/preferences", {"send_key": "ctrl_enter"})
    open_page(browser, clean_prefs.base)
    box = by_id(browser, "input")
    wait_until(lambda: "Ctrl+Enter" in box.get_attribute("placeholder"), message="the placeholder says it")
    assert "Ctrl+Enter" in by_id(browser, "empty-hint").text
    box.click()
    box.send_keys("first line", Keys.ENTER, "second line")
    assert box.get_attribute("value") == "first line\nsecond line", "Enter adds a new line"
    assert not messages(browser), "nothing sent"
    box.send_keys(Keys.CONTROL, Keys.ENTER)
    wait_until(lambda: len(messages(browser)) >= 2, message="Ctrl+Enter sends")
    assert messages(browser, "user")[0].find_element(By.CSS_SELECTOR, ".message-body").text.startswith("first line")
    wait_idle(browser)
    # Back to Enter from the dialog: Enter sends again.
    open_preferences(browser)
    browser.find_element(By.CSS_SELECTOR, "input[name='send_key'][value='enter']").click()
    save_preferences(browser)
    browser.find_element(By.ID, "preferences-close").click()
    send_message(browser, "Enter sends")
    wait_idle(browser)


# MARK: - Item 8: import and export

def choose_file(driver, folder, name, text):
    path = folder / name
    path.write_text(text, encoding="utf-8")
    driver.find_element(By.ID, "import-file").send_keys(str(path))


def test_a_json_file_that_is_not_an_export_says_so_and_imports_are_marked(browser, parley_prefs, artifacts, request):
    request.node.allowed_console = ["status of 400"]
    open_page(browser, parley_prefs.base)
    choose_file(browser, artifacts, "settings-of-another-program.json", json.dumps({"name": "x", "items": [1]}))
    status = by_id(browser, "transfer-status")
    wait_until(lambda: status.text.startswith("Not imported:"), message="refused")
    assert "This isn't a Parley export" in status.text, status.text
    assert "is missing" not in status.text
    choose_file(browser, artifacts, "notes.txt", "plain text")
    wait_until(lambda: "isn't a Parley export" in status.text, message="not JSON")

    source = conversation(parley_prefs, "Brought from elsewhere")
    exported = parley_prefs.api("GET", f"/api/conversations/{source}/export")
    choose_file(browser, artifacts, "an-export.json", json.dumps(exported))
    wait_until(lambda: status.text == "Imported 1 conversation.", message="imported")
    new_id = wait_until(lambda: "#/c/" in browser.current_url and browser.current_url.split("#/c/")[1], message="opened")
    assert new_id != source
    badge = wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, f"#list-view li[data-id='{new_id}'] .imported-badge"),
                       message="the imported badge")[0]
    assert badge.text == "imported"
    assert not browser.find_elements(By.CSS_SELECTOR, f"#list-view li[data-id='{source}'] .imported-badge")
    browser.refresh()
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, f"#list-view li[data-id='{new_id}'] .imported-badge"),
               message="still marked after a reload")


def test_export_links_name_the_file_after_the_title(browser, parley_prefs):
    cid = conversation(parley_prefs, "How do I reverse a list?", turns=0)
    open_page(browser, parley_prefs.base, f"/#/c/{cid}")
    open_conversation_menu(browser)
    link = by_id(browser, "export-markdown")
    with urllib.request.urlopen(link.get_attribute("href")) as response:
        disposition = response.headers["Content-Disposition"]
    assert disposition == 'attachment; filename="parley-How-do-I-reverse-a-list.md"', disposition
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)


# MARK: - Item 9: smaller

def test_opening_the_drawer_on_a_phone_does_not_focus_the_search_box(browser, parley_prefs):
    browser.set_window_size(*SIZES["phone"])
    open_page(browser, parley_prefs.base)
    by_id(browser, "toggle-sidebar").click()
    wait_until(lambda: by_id(browser, "sidebar").rect["x"] >= 0, message="the drawer open")
    active = browser.switch_to.active_element
    assert active.get_attribute("id") != "search", "the keyboard would pop up"
    assert active.get_attribute("id") == "new-conversation", "the focus is in the drawer"
    active.send_keys(Keys.ESCAPE)


def test_the_edit_box_takes_the_columns_width(browser, parley_prefs, layout):
    size, _ = layout
    cid = conversation(parley_prefs, "Edit wide")
    open_page(browser, parley_prefs.base, f"/#/c/{cid}")
    user = wait_until(lambda: messages(browser, "user"), message="the question")[0]
    js(browser, "arguments[0].querySelector('[data-action=edit]').click()", user)
    area = wait_until(lambda: user.find_element(By.CSS_SELECTOR, ".edit-form textarea"), message="the editor")
    widths = js(browser, "return [arguments[0].getBoundingClientRect().width,"
                         " document.getElementById('message-list').getBoundingClientRect().width]", area)
    assert widths[0] >= widths[1] * 0.9, f"{size}: {widths}"
    area.send_keys(Keys.ESCAPE)


def test_show_archived_says_when_it_is_on(browser, parley_prefs):
    open_page(browser, parley_prefs.base)
    toggle = by_id(browser, "show-archived")
    assert toggle.text.endswith("Off")
    toggle.click()
    wait_until(lambda: toggle.text.endswith("On"), message="it says On")
    assert toggle.get_attribute("aria-pressed") == "true"
    assert toggle.accessible_name == "Show archived", "the name stays; aria-pressed tells the state"
    toggle.click()
    wait_until(lambda: toggle.text.endswith("Off"), message="Off again")


def test_the_empty_state_names_the_model_and_offers_example_prompts(browser, parley_prefs, layout):
    size, _ = layout
    open_page(browser, parley_prefs.base)
    js(browser, "localStorage.removeItem('parley.model')")  # (the model last chosen in this browser)
    open_page(browser, parley_prefs.base)
    title = browser.find_element(By.CSS_SELECTOR, "#empty-state .empty-title")
    wait_until(lambda: title.text == "Start a conversation with fake", message="the model named")
    examples = browser.find_elements(By.CSS_SELECTOR, "#example-prompts button")
    assert len(examples) >= 3
    assert_accessible(browser, f"empty state with examples ({size})")
    text = examples[1].text
    examples[1].click()
    box = by_id(browser, "input")
    assert box.get_attribute("value") == text
    assert browser.switch_to.active_element == box
    assert not messages(browser), "filled, not sent"
    Select(by_id(browser, "model")).select_by_value("openai:other")
    wait_until(lambda: title.text == "Start a conversation with other", message="follows the picker")


def test_a_failed_answer_shows_one_retry_and_nothing_else(browser, parley_prefs, fake_upstream):
    fake_upstream.mode = "fail"
    try:
        open_page(browser, parley_prefs.base)
        Select(by_id(browser, "model")).select_by_value("openai:fake")
        send_message(browser, "This will fail")
        answer_id = last_assistant_id(browser)
        answer = browser.find_element(By.CSS_SELECTOR, f"#message-list .message[data-id='{answer_id}']")
        wait_until(lambda: answer.find_element(By.CSS_SELECTOR, ".message-error").is_displayed(), message="the error")
        wait_idle(browser)
        names = [b.text for b in answer.find_elements(By.CSS_SELECTOR, "button") if b.is_displayed()]
        assert names.count("Retry") == 1, names
        assert "Regenerate" not in names and "Copy" not in names, names
    finally:
        fake_upstream.mode = "ok"


def test_users_screen_counts_in_the_singular_and_add_user_says_the_password_minimum(browser, parley_team, request):
    request.node.allowed_console = ["status of 401"]
    start_signed_out(browser, parley_team)
    sign_in(browser, *TEAM_ADMIN)
    cookie = {"Cookie": "parley_session=" + next(c["value"] for c in browser.get_cookies() if c["name"] == "parley_session")}
    username = "single" + str(abs(hash(request.node.name)) % 10000)
    try:
        parley_team.api("POST", "/api/users", {"username": username, "password": "single's password"}, headers=cookie)
    except urllib.error.HTTPError:
        pass  # made by an earlier run of this test in the same session
    member = {"Cookie": parley_team.sign_in(username, "single's password")}
    parley_team.api("POST", "/api/conversations", {"title": "Only one"}, headers=member)
    open_menu_item(browser, "Users")
    dialog = by_id(browser, "users-dialog")
    row = wait_until(lambda: [r for r in dialog.find_elements(By.CSS_SELECTOR, "#user-list tr") if username in r.text
                              and "conversation" in r.text], message="the user's usage")[0]
    assert "1 conversation," in row.text or row.text.rstrip().endswith("1 conversation"), row.text
    assert "1 conversations" not in row.text, row.text
    password = by_id(browser, "user-password")
    hint = by_id(browser, password.get_attribute("aria-describedby"))
    assert hint.is_displayed() and "at least 8 characters" in hint.text.lower(), hint.text
    assert "8 characters" in js(browser, "return arguments[0].ariaDescription || ''", password) or hint.text
    assert_accessible(browser, "users dialog with the password hint")
    dialog.find_element(By.CSS_SELECTOR, "button[data-close]").click()


@pytest.mark.parametrize("size", list(SIZES))
def test_dark_dialogs_dim_the_page_behind_them(browser, parley_prefs, size):
    browser.set_window_size(*SIZES[size])
    set_color_scheme(browser, "dark")
    try:
        cid = conversation(parley_prefs, "Dim behind", turns=0)
        open_page(browser, parley_prefs.base, f"/#/c/{cid}")
        conversation_action(browser, "rename")
        dialog = by_id(browser, "rename-dialog")
        wait_until(lambda: dialog.get_attribute("open"), message="the dialog")
        alpha, surface = js(browser, """
            const d = arguments[0];
            const b = getComputedStyle(d, '::backdrop').backgroundColor;
            const m = b.match(/rgba?\\(([^)]+)\\)/)[1].split(',').map(Number);
            return [m.length > 3 ? m[3] : 1, getComputedStyle(d).backgroundColor];""", dialog)
        assert alpha >= 0.6, f"black at {alpha} hardly dims a dark page"
        assert surface != background(browser), "the dialog stands out from the page"
        browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    finally:
        set_color_scheme(browser, None)
