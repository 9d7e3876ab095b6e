#!/usr/bin/env python3
"""The chat page `deltaserve serve` answers at /, in a real headless browser (Debian's Chromium,
driven through chromedriver by Selenium): the page loads and names the model; a message typed and
sent with Enter streams in, its reasoning folded apart from the answer, with token counts and speed;
the stop button cancels a long reply (the server logs it as aborted); an API key set in the page
is sent; the page fits a 400 px wide window; --no-ui turns it off. The `tiny` random checkpoint with
the real Qwen3.5 vocabulary, a scripted reply where the test needs known text (--test-script).

Usage: chat_page_e2e_test.py DELTASERVE_BINARY REPO_DIR
"""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from access_e2e_test import Server, http, tiny_model  # noqa: E402  (shared set-up; runs nothing on import)

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

failures = []
SCRIPT = [{"prompt_contains": "PAGE_TEST", "reply": "Thinking it over.\n</think>\n\nHello from the page test."}]


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=400,800"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait_for(driver, what, condition, seconds=60):
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.1).until(lambda d: condition(d))
    except Exception:  # noqa: BLE001 (a timeout is a failed check, with what the page shows)
        check(False, f"{what} (page text: {driver.find_element(By.TAG_NAME, 'body').text[:500]!r})")
        return None


def last(driver, css):
    found = driver.find_elements(By.CSS_SELECTOR, css)
    return found[-1] if found else None


def open_page(driver, port):
    driver.get(f"http://127.0.0.1:{port}/")
    check(driver.title == "deltaserve chat", f"the page loads: title {driver.title!r}")
    wait_for(driver, "without a key the page opens its settings at the key field",
             lambda d: d.find_element(By.ID, "settings").get_attribute("open") is not None and
             d.switch_to.active_element.get_attribute("id") == "api_key")
    driver.switch_to.active_element.send_keys("page-key", Keys.TAB)  # 'change' reloads the model list
    wait_for(driver, "the header names the model once the key is set", lambda d: d.find_element(By.ID, "model").text == "tiny")


def run_page_tests(server):
    driver = browser()
    try:
        open_page(driver, server.port)
        check(driver.execute_script("return document.documentElement.scrollWidth <= document.documentElement.clientWidth"),
              "the page fits 400 px: no horizontal scrolling")

        box = driver.find_element(By.ID, "input")
        box.send_keys("PAGE_TEST please", Keys.ENTER)  # Enter sends
        done = wait_for(driver, "the scripted reply streams in with its stats",
                        lambda d: last(d, ".assistant .stats") is not None and "generated" in last(d, ".assistant .stats").text)
        if done:
            check(last(driver, ".assistant .content").text == "Hello from the page test.",
                  f"the answer: {last(driver, '.assistant .content').text!r}")
            reasoning = driver.execute_script("return document.querySelector('.assistant .reasoning').textContent")
            check("Thinking it over." in reasoning, f"the reasoning, apart from the answer: {reasoning!r}")
            check(driver.execute_script("return !document.querySelector('.assistant details').open"), "reasoning is folded")
            stats = last(driver, ".assistant .stats").text
            check("prompt tokens" in stats and "tok/s" in stats and "stop" in stats, f"token counts and speed: {stats!r}")
        check(last(driver, ".user .content").text == "PAGE_TEST please", "the user's message is shown")

        open_page(driver, server.port)  # a new conversation: the script's needle is in the old one's history
        max_tokens = driver.find_element(By.ID, "max_tokens")
        max_tokens.clear()
        max_tokens.send_keys("4000")
        driver.find_element(By.ID, "input").send_keys("write something long", Keys.ENTER)
        wait_for(driver, "a long reply starts", lambda d: len(d.execute_script(
            "const a = document.querySelector('.assistant'); return a ? a.textContent : ''")) > 60)
        driver.find_element(By.ID, "stop").click()
        wait_for(driver, "the stop button cancels", lambda d: "stopped" in last(d, ".assistant .stats").text)
        check(driver.find_element(By.ID, "send").is_enabled() and not driver.find_element(By.ID, "stop").is_enabled(),
              "after a stop, Send is back and Stop is off")
    finally:
        driver.quit()
    log = ""
    for _ in range(50):  # the server notices the closed stream at its next write
        log = server.log_text()
        if "finish abort" in log:
            break
        time.sleep(0.1)
    check("finish abort" in log, "the server logs the stopped request as aborted")


def main():
    work = tempfile.mkdtemp(prefix="deltaserve-page-")
    try:
        model = tiny_model(work)
        script = os.path.join(work, "script.json")
        with open(script, "w") as f:
            json.dump(SCRIPT, f)
        server = Server(model, "--api-key", "page-key", "--test-script", script, "--served-model-name", "tiny")
        try:
            status, headers, body = http(server.port, "GET", "/")
            check(status == 200 and headers.get("Content-Type", "").startswith("text/html") and "<title>deltaserve chat" in body,
                  f"GET / answers the page without a key: {status}")
            run_page_tests(server)
        finally:
            server.stop()
        server = Server(model, "--no-ui")
        try:
            check(http(server.port, "GET", "/")[0] == 404, "--no-ui: no page")
        finally:
            server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"chat page e2e: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
