"""The console in a real headless Chromium (Debian's chromium + chromium-driver, driven by Selenium).

One browser session over one `python -m local`: a mail sent through the API appears in the
outbox, its page shows the rendered mail in a script-less sandbox and its history, and a
suppression is lifted with a reason. Screenshots are kept under build/ as artifacts.
SENDLEDGER_SKIP_BROWSER=1 skips it; a machine without the browser fails it (CI must have one).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests

from local.constants import LOCAL_PRINCIPAL
from tests.local.local_support import REPO, REQUEST_TIMEOUT_SECONDS
from tests.local.sigv4_support import ADMIN, APP, signed_request
from tests.local.test_local_stack_http import StackProcess, stack

__all__ = ["stack"]  # the module-scoped `python -m local` fixture

ARTIFACTS = REPO / "build" / "browser"
WAIT_SECONDS = 20.0  # a refresh is 2 s; the budget covers a slow, shared CI machine

if os.environ.get("SENDLEDGER_SKIP_BROWSER") == "1":
    pytest.skip("SENDLEDGER_SKIP_BROWSER=1", allow_module_level=True)

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


def system_browser() -> tuple[str, str]:
    """(chromium, chromedriver) from the system; never a download (no Selenium Manager)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.fail(
            "headless Chromium is needed: apt-get install -y chromium chromium-driver "
            "(scripts/system-packages.sh, the first step of make test, installs them), "
            "or set SENDLEDGER_SKIP_BROWSER=1 to skip the browser test"
        )
    return chromium, driver


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    chromium, driver = system_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "SEVERE"})  # the page's script errors
    session = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        yield session
    finally:
        session.quit()


def wait_for(browser: WebDriver, what: str, condition: Any) -> Any:
    # The page re-renders on every refresh: an element found a moment ago may be gone, so the
    # condition is tried again rather than failing on a stale reference.
    wait = WebDriverWait(browser, WAIT_SECONDS, ignored_exceptions=[StaleElementReferenceException])
    return wait.until(condition, message=f"the console to show {what}")


def click(browser: WebDriver, by: str, selector: str) -> None:
    """Click what the selector finds now (found again if a refresh replaced it meanwhile)."""
    wait_for(browser, f"{selector} to click", lambda b: b.find_element(by, selector).click() is None)


def read(browser: WebDriver, what: str, value: Any) -> Any:
    """A value read from the page, read again if a refresh replaced its element meanwhile."""
    return wait_for(browser, what, value)


# Each row's reason field and Lift/Suppress button that does not lie wholly inside the viewport,
# the page scrolled to its left edge (a control reachable only by scrolling sideways is clipped).
CONTROLS_OUTSIDE_VIEWPORT = """
window.scrollTo(0, window.scrollY);
const width = document.documentElement.clientWidth;
return [...document.querySelectorAll("#suppressions tbody tr")].flatMap((row) =>
  [...row.querySelectorAll("input[name=reason], button")]
    .map((control) => [row.dataset.recipient, control.textContent || control.name, control.getBoundingClientRect()])
    .filter(([, , box]) => box.left < 0 || box.right > width)
    .map(([recipient, what, box]) => `${recipient} ${what}: ${box.left | 0}-${box.right | 0} of ${width}`));
"""


def screenshot(browser: WebDriver, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    assert browser.save_screenshot(str(path))
    return path


def test_console_outbox_mail_history_and_lifting_a_suppression(stack: StackProcess, browser: WebDriver) -> None:
    base = stack.url
    body = {
        "channel": "email",
        "to": "success@simulator.amazonses.com",
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "disk <b>full</b> on db-1"},
    }
    headers = {"Content-Type": "application/json", "Idempotency-Key": "browser-alert-1"}
    # Signed as `app`: the console shows every caller's messages, not only the local principal's.
    sent = signed_request("POST", f"{base}/v1/messages", json.dumps(body).encode(), headers, credential=APP)
    assert sent.status_code == 202, sent.text
    message_id = sent.json()["message_id"]
    # A bounce, whose suppression's last change carries an SES event's long ids as evidence.
    bounce = {**body, "to": "bounce@simulator.amazonses.com"}
    bounced = signed_request(
        "POST",
        f"{base}/v1/messages",
        json.dumps(bounce).encode(),
        headers | {"Idempotency-Key": "browser-bounce-1"},
        credential=APP,
    )
    assert bounced.status_code == 202, bounced.text
    carol = "carol@example.com"
    admin_url = f"{base}/v1/admin/suppressions/{quote(carol, safe='')}"
    reason = json.dumps({"reason": "asked to stop"}).encode()
    suppressed = signed_request("PUT", admin_url, reason, {"Content-Type": "application/json"}, credential=ADMIN)
    assert suppressed.json()["suppressed"] is True
    # An operator's reason with no space to wrap at: a ticket's URL pasted whole.
    ticket = "https://tickets.example.com/browse/OPS-4711?focusedCommentId=1234567&page=com.example.tabpanels" * 2
    erin = f"{base}/v1/admin/suppressions/{quote('erin.with.a.long.address@subdomain.example.com', safe='')}"
    pasted = json.dumps({"reason": ticket}).encode()
    assert (
        signed_request("PUT", erin, pasted, {"Content-Type": "application/json"}, credential=ADMIN).status_code == 200
    )

    # The outbox, newest first, with the message's state; "Poll now" applies SES's Delivery event.
    browser.get(f"{base}/")
    assert browser.current_url.endswith("/local/console")
    row_selector = f"tr[data-message-id='{message_id}']"
    wait_for(browser, "the sent mail", lambda b: b.find_elements(By.CSS_SELECTOR, row_selector))
    click(browser, By.ID, "poll-now")
    wait_for(
        browser,
        "the mail delivered",
        lambda b: b.find_element(By.CSS_SELECTOR, f"{row_selector} .badge").get_attribute("data-state") == "delivered",
    )

    # The message page: the HTML part in a sandbox without scripts, the text part, the history.
    click(browser, By.CSS_SELECTOR, row_selector)
    frame = wait_for(browser, "the rendered mail", lambda b: b.find_element(By.ID, "mail-html"))
    sandbox = frame.get_attribute("sandbox").split()
    assert "allow-scripts" not in sandbox and "allow-same-origin" not in sandbox
    wait_for(browser, "the HTML part", lambda b: "<strong>Alert</strong>" in (frame.get_attribute("srcdoc") or ""))
    head = read(browser, "the mail's header", lambda b: b.find_element(By.ID, "mail-head").text)
    assert message_id in head and "no-reply@example.com" in head and "alert v1" in head
    browser.switch_to.frame(frame)
    rendered = browser.find_element(By.TAG_NAME, "body").text
    browser.switch_to.default_content()
    assert "disk <b>full</b> on db-1" in rendered  # the param escaped, as the template renders it
    assert "disk <b>full</b> on db-1" in browser.find_element(By.ID, "mail-text").text
    history = wait_for(
        browser,
        "the delivery in the history",
        lambda b: b.find_elements(By.CSS_SELECTOR, "#history li[data-type='event:Delivery']"),
    )
    steps = read(
        browser,
        "the history's steps",
        lambda b: [li.get_attribute("data-type") for li in b.find_elements(By.CSS_SELECTOR, "#history li")],
    )
    assert steps[0] == "intent" and "provider_outcome" in steps and history
    evidence = read(browser, "the history's evidence", lambda b: b.find_element(By.ID, "history").text)
    assert "eligibility: eligible" in evidence and "suppression_version: 0" in evidence
    assert sent.json()["provider_message_id"] in evidence
    screenshot(browser, "console-message.png")

    # A password-reset mail: its link is the developer's own, clickable in the frame and beside it.
    reset = {"account_id": "acct-browser", "email": "dana@example.com"}
    assert requests.post(f"{base}/v1/password-resets", json=reset, timeout=REQUEST_TIMEOUT_SECONDS).status_code == 202
    click(browser, By.LINK_TEXT, "← Outbox")
    click(browser, By.ID, "poll-now")  # the poller mints the token and sends the mail
    wait_for(browser, "the reset mail", lambda b: b.find_elements(By.LINK_TEXT, "Reset your password"))
    click(browser, By.LINK_TEXT, "Reset your password")
    links = wait_for(browser, "the reset link", lambda b: b.find_elements(By.CSS_SELECTOR, "#mail-links a.mail-link"))
    href = links[0].get_attribute("href")
    assert "token=" in href and links[0].get_attribute("target") == "_blank"
    assert browser.find_element(By.CSS_SELECTOR, "#mail-text a.mail-link").get_attribute("href") == href
    frame = browser.find_element(By.ID, "mail-html")
    wait_for(browser, "the reset mail's HTML", lambda _: "token=" in (frame.get_attribute("srcdoc") or ""))
    opened = len(browser.window_handles)
    browser.switch_to.frame(frame)
    click(browser, By.TAG_NAME, "a")  # the sandbox allows popups, so the link opens
    browser.switch_to.default_content()
    wait_for(browser, "the link in a new tab", lambda b: len(b.window_handles) == opened + 1)
    main = browser.current_window_handle
    browser.switch_to.window(browser.window_handles[-1])
    browser.close()
    browser.switch_to.window(main)

    # The suppression list: a reason is required, then the lift is recorded with it.
    click(browser, By.ID, "nav-suppressions")
    carol_row = f"tr[data-recipient='{carol}']"
    wait_for(browser, "carol suppressed", lambda b: b.find_elements(By.CSS_SELECTOR, f"{carol_row} .badge"))
    badge = read(browser, "carol's badge", lambda b: b.find_element(By.CSS_SELECTOR, f"{carol_row} .badge"))
    assert badge.get_attribute("data-state") == "suppressed"
    assert (
        read(browser, "carol's version", lambda b: b.find_element(By.CSS_SELECTOR, f"{carol_row} .version").text) == "1"
    )
    click(browser, By.CSS_SELECTOR, f"{carol_row} button.lift")
    refusal = browser.find_element(By.ID, "admin-result")
    wait_for(browser, "the reason refusal", lambda _: "reason is required" in refusal.text)
    assert requests.get(admin_url.replace("/admin", ""), timeout=REQUEST_TIMEOUT_SECONDS).json()["suppressed"]
    browser.find_element(By.CSS_SELECTOR, f"{carol_row} input[name=reason]").send_keys("confirmed by phone")
    click(browser, By.CSS_SELECTOR, f"{carol_row} button.lift")
    wait_for(
        browser,
        "carol sendable",
        lambda b: b.find_element(By.CSS_SELECTOR, f"{carol_row} .badge").get_attribute("data-state") == "sendable",
    )
    # The actor and the admin's reason are the admin view's (a caller's view shows neither)
    view = requests.get(admin_url, timeout=REQUEST_TIMEOUT_SECONDS).json()
    assert (view["suppressed"], view["version"]) == (False, 2)
    assert view["history"][-1]["reason"] == "confirmed by phone"
    assert view["history"][-1]["actor"] == LOCAL_PRINCIPAL  # the console's requests are unsigned
    # At 1400 px every row's reason field and Lift/Suppress button are inside the viewport
    browser.set_window_size(1400, 1000)
    rows = read(browser, "the rows", lambda b: b.find_elements(By.CSS_SELECTOR, "#suppressions tbody tr"))
    assert len(rows) >= 2
    outside = browser.execute_script(CONTROLS_OUTSIDE_VIEWPORT)
    assert outside == [], outside
    screenshot(browser, "console-suppressions.png")

    # The event stream: shown when the stack has one, otherwise said plainly.
    click(browser, By.ID, "nav-events")
    wait_for(browser, "the event stream", lambda b: b.find_element(By.ID, "events").text.strip())
    # Script errors only: a 404 from /local/events is an answer the page handles.
    errors = [entry for entry in browser.get_log("browser") if entry.get("source") != "network"]
    assert not errors, errors


def test_templates_page_lists_both_owners_and_previews_with_params_and_segments(
    stack: StackProcess, browser: WebDriver
) -> None:
    base = stack.url
    welcome = {
        "params": ["name"],
        "email": {"subject": "Welcome ${name}", "text": "Hello ${name}", "html": "<p>Hello <b>${name}</b></p>"},
        "sms": {"text": "Hello ${name}"},
        "locales": {"fr": {"sms": {"text": "Bonjour ${name}, à bientôt"}}},
    }
    # Unsigned, as the console's own requests: the local principal's template.
    published = requests.put(f"{base}/v1/templates/welcome/versions/1", json=welcome, timeout=REQUEST_TIMEOUT_SECONDS)
    assert published.status_code in (200, 201), published.text

    browser.get(f"{base}/#/templates")
    mine = "tr[data-template='welcome/1/caller']"
    wait_for(browser, "the caller's template", lambda b: b.find_elements(By.CSS_SELECTOR, mine))
    assert browser.find_elements(By.CSS_SELECTOR, "tr[data-template='alert/1/deployment']")
    click(browser, By.CSS_SELECTOR, mine)
    name = wait_for(browser, "the param's field", lambda b: b.find_element(By.NAME, "param-name"))
    name.clear()
    name.send_keys("<i>Ana</i>")
    click(browser, By.CSS_SELECTOR, "#preview-form button")
    frame = wait_for(browser, "the preview's frame", lambda b: b.find_element(By.ID, "preview-html"))
    assert "allow-scripts" not in (frame.get_attribute("sandbox") or "").split()
    wait_for(
        browser,
        "the param escaped in the HTML",
        lambda b: "Hello <b>&lt;i&gt;Ana&lt;/i&gt;</b>" in (frame.get_attribute("srcdoc") or ""),
    )
    assert published.json()["sha256"] in browser.find_element(By.ID, "template-preview").text
    # The SMS in French: its words, the encoding a carrier uses and the segments it bills.
    browser.find_element(By.NAME, "locale").send_keys("fr-CA")
    browser.find_element(By.CSS_SELECTOR, "select[name=channel] option[value=sms]").click()
    click(browser, By.CSS_SELECTOR, "#preview-form button")
    wait_for(
        browser,
        "the SMS segments",
        lambda b: "UCS-2, 29 units, 1 segment(s) billed" in b.find_element(By.ID, "preview-result").text,
    )
    assert "Bonjour <i>Ana</i>, à bientôt" in browser.find_element(By.ID, "preview-text").text
    screenshot(browser, "console-templates.png")
    errors = [entry for entry in browser.get_log("browser") if entry.get("source") != "network"]
    assert not errors, errors
