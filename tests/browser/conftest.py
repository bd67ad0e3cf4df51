"""The browser fixture: Debian's Chromium through Playwright (never a downloaded browser)."""

from __future__ import annotations

import pytest
from django.db import connections

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
def page(chromium, live_server_url, monkeypatch):
    from playwright.sync_api import expect, sync_playwright

    # Playwright's sync API keeps an event loop in this thread, so Django takes the test's plain
    # ORM calls for calls from async code; they are not, nothing else runs on that loop.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        context = browser.new_context()
        page = context.new_page()
        # Generous waits: CI runs these beside the rest of the suite on two cores.
        page.set_default_timeout(15_000)
        expect.set_options(timeout=15_000)
        page.csp_violations = []
        page.on(
            "console",
            lambda msg: (
                "Content Security Policy" in msg.text and page.csp_violations.append(msg.text)
            ),
        )
        yield page
        browser.close()
        # The ORM calls made while Playwright runs got connections of their own: close them.
        connections.close_all()
