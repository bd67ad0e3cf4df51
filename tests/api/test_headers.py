"""Security headers and the Content-Security-Policy, on pages, the API and the API docs."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.test import Client

from tests.conftest import OWNER_PASSWORD

# What a script's type may be and still be data that the browser never runs.
DATA_SCRIPT_TYPES = {"application/json", "application/ld+json", "importmap-data"}


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    directives = {}
    for part in header.split(";"):
        if part.strip():
            name, *sources = part.split()
            directives[name] = sources
    return directives


def assert_security_headers(response) -> None:
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"
    directives = policy(response)
    assert directives["default-src"] == ["'self'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["object-src"] == ["'none'"]
    for name in ("script-src", "style-src", "default-src"):
        assert "'unsafe-inline'" not in directives.get(name, [])
        assert "'unsafe-eval'" not in directives.get(name, [])


@pytest.fixture
def browser(owner) -> Client:
    client = Client()
    client.login(username="owner", password=OWNER_PASSWORD)
    return client


@pytest.mark.parametrize("path", ["/login/", "/admin/login/", "/api/health", "/api/tasks", "/"])
def test_anonymous_answers_carry_the_headers(db, path):
    assert_security_headers(Client().get(path))


@pytest.mark.parametrize("path", ["/", "/api/tasks", "/api/docs", "/admin/", "/api/nowhere"])
def test_owner_answers_carry_the_headers(browser, path):
    assert_security_headers(browser.get(path))


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "script":
            self.scripts.append(attributes)
        self.handlers += [f"{tag} {name}" for name in attributes if name.startswith("on")]


def script_problems(html: str, directives: dict[str, list[str]]) -> list[str]:
    """Which scripts of a page its CSP would block (or that would not load at all)."""
    allowed = directives.get("script-src", directives.get("default-src", []))
    parser = _Scripts()
    parser.feed(html)
    problems = [f"inline event handler: {handler}" for handler in parser.handlers]
    for script in parser.scripts:
        src = script.get("src")
        if src is None:
            kind = (script.get("type") or "text/javascript").lower()
            nonce = script.get("nonce")
            if kind in DATA_SCRIPT_TYPES:
                continue
            if not nonce or f"'nonce-{nonce}'" not in allowed:
                problems.append(f"inline script without an allowed nonce (type {kind})")
            continue
        parts = urlsplit(src)
        if parts.netloc:
            if parts.netloc not in allowed and f"{parts.scheme}://{parts.netloc}" not in allowed:
                problems.append(f"{src}: host not allowed")
            continue
        if "'self'" not in allowed:
            problems.append(f"{src}: 'self' not allowed")
        elif src.startswith(settings.STATIC_URL) and not finders.find(
            src.removeprefix(settings.STATIC_URL)
        ):
            problems.append(f"{src}: no such static file")
    return problems


def test_the_api_docs_scripts_are_allowed_by_their_policy(browser):
    response = browser.get("/api/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert re.search(r"<script[^>]+src=", html), "the docs page should load Swagger UI"
    assert script_problems(html, policy(response)) == []


def test_the_script_check_catches_what_the_policy_blocks():
    directives = {"script-src": ["'self'"]}
    assert script_problems('<script>alert(1)</script><a onclick="x()">', directives) == [
        "inline event handler: a onclick",
        "inline script without an allowed nonce (type text/javascript)",
    ]
    assert script_problems('<script src="https://cdn.example/x.js"></script>', directives) == [
        "https://cdn.example/x.js: host not allowed"
    ]
    assert script_problems('<script type="application/json">{}</script>', directives) == []


def test_the_owner_pages_have_no_blocked_scripts(browser):
    for path in ("/", "/login/"):
        response = browser.get(path, follow=True)
        assert script_problems(response.content.decode(), policy(response)) == [], path


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_api_docs_work_in_a_browser_under_the_policy(live_server, chromium, owner):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            # Injected by the browser itself, so it is not subject to the page's policy.
            page.add_init_script(
                "window.__violations = [];"
                "document.addEventListener('securitypolicyviolation', e =>"
                " window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));"
            )
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))

            page.goto(f"{live_server.url}/login/?next=/api/docs")
            page.fill("input[name=username]", "owner")
            page.fill("input[name=password]", OWNER_PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url("**/api/docs")
            page.wait_for_selector(".opblock", timeout=15_000)

            # "Try it out" on an unsafe operation: Swagger UI must send the CSRF header.
            operation = page.locator("[id$='token_create']")
            operation.locator(".opblock-summary").click()
            operation.get_by_role("button", name="Try it out").click()
            with page.expect_response("**/api/auth/tokens") as answer:
                operation.get_by_role("button", name="Execute").click()
            status = answer.value.status

            assert page.evaluate("window.__violations") == []
            assert errors == []
            assert page.locator(".opblock").count() > 10
            assert status == 201
        finally:
            browser.close()
