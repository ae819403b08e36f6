"""The page through three nodes behind nginx round-robin (issue 24): the send, the stream, a reload
mid-answer and a stop each land on whichever node nginx picks, and the page shows exactly what is
stored, as on one node."""
from selenium.webdriver.common.by import By

from conftest import assert_shows_stored, last_assistant_id, open_page, send_message, wait_idle, wait_until


def answer_text(driver, message_id):
    return driver.execute_script(
        "const e = document.querySelector(`#message-list .message[data-id='${arguments[0]}']`);"
        "return e ? e.textContent : '';", message_id)


def test_the_page_works_through_three_nodes(browser, parley_cluster):
    open_page(browser, parley_cluster.base)
    send_message(browser, "Across the nodes")
    answer_id = last_assistant_id(browser)
    wait_until(lambda: len(answer_text(browser, answer_id)) > 60, message="some streamed text")
    browser.refresh()
    wait_until(lambda: browser.execute_script(
        "return !!document.querySelector(`#message-list .message[data-id='${arguments[0]}'].is-streaming`)",
        answer_id), timeout=10, message="the page to reattach to the running answer (maybe on another node)")
    wait_idle(browser, timeout=30)
    stored = assert_shows_stored(browser, parley_cluster, answer_id)
    assert stored["status"] == "complete"
    assert stored["content"].count("## Demo answer") == 1

    send_message(browser, "Stop me on some node")
    second = last_assistant_id(browser)
    wait_until(lambda: len(answer_text(browser, second)) > 60, message="some streamed text")
    browser.find_element(By.CSS_SELECTOR, "#stop").click()
    wait_idle(browser)
    stopped = assert_shows_stored(browser, parley_cluster, second)
    assert stopped["status"] == "stopped"
