"""/api/docs follows light or dark as every page does (talorys/theme.js): dark, its page is
dark and Swagger UI's light sheet is inverted."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

BACKGROUND = "getComputedStyle(document.documentElement).backgroundColor"


def test_the_api_docs_are_dark_in_dark_mode(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    page.emulate_media(color_scheme="dark")
    page.goto(f"{live_server_url}/api/docs")
    expect(page.locator(".swagger-ui .info .title")).to_be_visible()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert page.evaluate(BACKGROUND) == "rgb(20, 22, 27)"
    ui_filter = page.evaluate("getComputedStyle(document.querySelector('.swagger-ui')).filter")
    assert "invert" in ui_filter

    page.emulate_media(color_scheme="light")
    page.reload()
    expect(page.locator(".swagger-ui .info .title")).to_be_visible()
    assert page.evaluate("getComputedStyle(document.querySelector('.swagger-ui')).filter") == "none"
    assert page.csp_violations == []
