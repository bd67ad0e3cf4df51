"""The browser fixtures: Debian's Chromium through Playwright (never a downloaded browser).

``page`` is a fresh desktop page (1280×800) and ``phone`` a phone one (390×844, touch); both
record CSP violations in ``.csp_violations``. ``signed_in`` and ``signed_in_phone`` are the same
pages with the owner logged in (on the live daphne of ``live_server_url``). A test that fails
saves a screenshot of each of its pages under ``.artifacts/browser/`` (CI keeps the folder).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.db import connections

from tests.conftest import OWNER_PASSWORD

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
ARTIFACTS = Path(__file__).resolve().parents[2] / ".artifacts" / "browser"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.browser_failed = report.failed
    return report


@pytest.fixture(scope="package")
def chromium_browser(chromium) -> Iterator:
    """One Chromium for this worker's run of tests/browser (a launch cost 1.2 s of a test's 3 s
    setup); each test gets contexts of its own. While Playwright's loop runs in this thread,
    Django takes the tests' ORM calls for async ones: they are not (DJANGO_ALLOW_ASYNC_UNSAFE)."""
    from playwright.sync_api import expect, sync_playwright

    with pytest.MonkeyPatch.context() as patch, sync_playwright() as pw:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        # Generous waits: CI runs these beside the rest of the suite on two cores.
        expect.set_options(timeout=15_000)
        yield browser
        browser.close()
    connections.close_all()  # those made while Playwright's loop ran (see browser)


@pytest.fixture
def browser(chromium_browser, live_server_url) -> Iterator:
    """The worker's Chromium for one test, whose contexts close before its daphne stops (an open
    chat socket would hold daphne's shutdown). Its ORM connections, made while Playwright's loop
    ran (asgiref keeps them apart), close too: kept, one that a fault test ended meanwhile
    (tests/faults/test_turn_crash.py) failed the next browser test's first query."""
    yield chromium_browser
    for context in list(chromium_browser.contexts):
        context.close()
    connections.close_all()


@pytest.fixture
def new_page(browser, request) -> Iterator:
    """``new_page(viewport=..., mobile=False)``: a page in a context of its own."""
    pages = []

    def make(viewport: dict | None = None, *, mobile: bool = False, time_zone: str | None = None):
        options: dict = {"viewport": viewport or DESKTOP}
        if mobile:
            options |= {"is_mobile": True, "has_touch": True, "device_scale_factor": 2}
        if time_zone:
            options["timezone_id"] = time_zone
        context = browser.new_context(**options)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.csp_violations = []
        page.on(
            "console",
            lambda msg: (
                "Content Security Policy" in msg.text and page.csp_violations.append(msg.text)
            ),
        )
        pages.append(page)
        return page

    yield make
    if getattr(request.node, "browser_failed", False):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", request.node.nodeid)[-150:]
        for n, page in enumerate(pages):
            # A page the test closed has no screenshot to give.
            with contextlib.suppress(Exception):
                page.screenshot(path=str(ARTIFACTS / f"{name}-{n}.png"), full_page=True)


@pytest.fixture
def page(new_page, live_server_url):
    return new_page(DESKTOP)


@pytest.fixture
def phone(new_page, live_server_url):
    return new_page(PHONE, mobile=True)


def log_in(page, url: str) -> None:
    """Sign the owner in through the login page and wait for the chat."""
    page.goto(f"{url}/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/(c/\d+/)?$"))


def log_in_by_api(page, url: str) -> None:
    """Sign the owner in through the login API (log_in's owner_login without the form: 0.15 s
    instead of 0.9 s) and open the chat. The first run's time zone is chosen here as the page
    chooses it: the page's own PATCH reloads the page at a moment the test does not choose."""
    zone = page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone")
    with httpx.Client(base_url=url, timeout=15) as client:
        csrf = client.get("/api/auth/session").json()["csrf_token"]
        answer = client.post(
            "/api/auth/login",
            json={"username": "owner", "password": OWNER_PASSWORD},
            headers={"X-CSRFToken": csrf},
        )
        assert answer.status_code == 200, answer.text
        csrf = answer.json()["csrf_token"]
        chosen = client.patch(
            "/api/settings", json={"time_zone": zone}, headers={"X-CSRFToken": csrf}
        )
        assert chosen.status_code == 200, chosen.text
        cookies = [
            {"name": name, "value": value, "url": url, "httpOnly": name == "sessionid"}
            for name, value in client.cookies.items()
        ]
    page.context.add_cookies(cookies)
    page.goto(f"{url}/")
    page.wait_for_url(re.compile(r"/(c/\d+/)?$"))


@pytest.fixture
def signed_in(page, live_server_url):
    log_in_by_api(page, live_server_url)
    return page


@pytest.fixture
def signed_in_phone(phone, live_server_url):
    log_in_by_api(phone, live_server_url)
    return phone


def active_service_worker(page, live_server_url, sign_in=log_in):
    """Log in with notifications allowed, and wait for the active service worker: DevTools
    (its session), the worker's registration id and the worker as Playwright drives it."""
    page.context.grant_permissions(["notifications"], origin=live_server_url)
    sign_in(page, live_server_url)
    cdp = page.context.new_cdp_session(page)
    registrations: list[dict] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda event: registrations.extend(event["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    page.evaluate(
        """async () => {
            const registration = await navigator.serviceWorker.ready;
            while (registration.active.state !== "activated") {
                await new Promise((resolve) => setTimeout(resolve, 50));
            }
            return true;
        }"""
    )
    live: set[str] = set()
    for _ in range(50):  # DevTools reports the registration asynchronously
        live = {r["registrationId"] for r in registrations if not r["isDeleted"]}
        if live and page.context.service_workers:
            break
        page.wait_for_timeout(100)
    (registration,) = live
    (worker,) = page.context.service_workers
    return cdp, registration, worker


def in_a_thread(fn, /, **kwargs):
    """Call fn in a thread without an event loop and return its result: async_to_sync (which
    broadcasts a notification on commit) refuses to run beside Playwright's loop, which runs in
    a browser test's thread from the folder's first browser on (chromium_browser)."""

    def run():
        try:
            return fn(**kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()
