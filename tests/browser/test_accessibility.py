"""Every owner page, scanned with axe-core (vendored) in light and dark at desktop width, and at
phone width with no horizontal scroll. Also takes the screenshots of docs/screenshots/.

axe runs through Playwright's evaluate (the DevTools protocol), so the page's CSP is the real
one. A page fails on any violation axe rates serious or critical.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from pathlib import Path

import httpx
import pytest

from tests.browser.conftest import ARTIFACTS, DESKTOP, PHONE, log_in
from tests.conftest import OWNER_PASSWORD

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

VENDOR = Path(__file__).parent / "vendor"
AXE = VENDOR / "axe-core-4.14.1.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

PAGES = [
    "/",
    "/tasks/",
    "/projects/",
    "/notes/",
    "/files/",
    "/memories/",
    "/automations/",
    "/notifications/",
    "/approvals/",
    "/changes/",
    "/bin/",
    "/settings/",
    "/usage/",
    "/backup/",
    "/imports/",
]


def axe_source() -> str:
    source = AXE.read_bytes()
    assert hashlib.sha256(source).hexdigest() == AXE_SHA256, "the vendored axe-core changed"
    return source.decode()


def seed(url: str) -> dict:
    """Something of every kind, through the API as the owner's scripts would make it."""
    with httpx.Client(base_url=url) as client:
        login = client.post(
            "/api/auth/login", json={"username": "owner", "password": OWNER_PASSWORD}
        )
        client.headers["X-CSRFToken"] = login.json()["csrf_token"]
        project = client.post("/api/projects", json={"name": "Home"}).json()
        task = client.post(
            "/api/tasks",
            json={"title": "Buy oat milk", "project_id": project["id"], "due_at": None},
        ).json()
        binned = client.post("/api/tasks", json={"title": "Old errand"}).json()
        client.delete(f"/api/tasks/{binned['id']}")
        note = client.post(
            "/api/notes",
            json={"title": "Autumn", "content": "## Autumn\n\n**Plant** bulbs.\n\n```\nx = 1\n```"},
        ).json()
        client.post("/api/memories", json={"text": "The owner lives in Lisbon"})
        client.post(
            "/api/automations",
            json={
                "name": "Morning review",
                "kind": "reminder",
                "message": "Look at today's tasks",
                "schedule": {"type": "daily", "time": "07:30"},
            },
        )
        # A channel (nothing listens on port 9; nothing is sent while the pages are scanned).
        client.post("/api/channels", json={"name": "Phone", "url": "ntfy://127.0.0.1:9/talorys"})
        return {"project": project, "task": task, "note": note}


def violations(page, source: str) -> list[str]:
    page.evaluate(source)
    result = page.evaluate(
        "async () => await axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'best-practice']})"
    )
    return [
        f"{page.url} [{v['impact']}] {v['id']}: {v['help']} — "
        + "; ".join(n["target"][0] if n["target"] else "?" for n in v["nodes"][:3])
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def scan(page, url: str, source: str) -> list[str]:
    found = []
    for path in PAGES:
        response = page.goto(f"{url}{path}")
        assert response is not None and response.status == 200, (
            f"{path}: {response and response.status}"
        )
        page.wait_for_load_state("networkidle")
        found += violations(page, source)
    return found


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_page_has_a_serious_accessibility_violation(new_page, live_server_url, scheme):
    seed(live_server_url)
    page = new_page(DESKTOP)
    page.emulate_media(color_scheme=scheme)
    log_in(page, live_server_url)
    assert page.evaluate("document.documentElement.dataset.theme") == scheme
    assert scan(page, live_server_url, axe_source()) == []
    assert page.csp_violations == []


def test_every_page_fits_a_phone_without_horizontal_scroll(new_page, live_server_url):
    seed(live_server_url)
    page = new_page({"width": 360, "height": 740}, mobile=True)
    log_in(page, live_server_url)
    wide = []
    for path in PAGES:
        page.goto(f"{live_server_url}{path}")
        page.wait_for_load_state("networkidle")
        if page.evaluate("document.documentElement.scrollWidth > window.innerWidth + 1"):
            wide.append(path)
    assert wide == []
    # The pages are behind a menu button on a phone, and it opens them all.
    page.get_by_role("button", name="Menu").click()
    nav = page.get_by_role("navigation", name="Main")
    for name in ("Tasks", "Notes", "Memories", "Automations", "Settings", "Bin"):
        assert nav.get_by_role("link", name=name).is_visible()
    assert page.csp_violations == []


def test_the_theme_toggle_switches_and_is_remembered(new_page, live_server_url):
    page = new_page(DESKTOP)
    page.emulate_media(color_scheme="light")
    log_in(page, live_server_url)
    page.get_by_role("button", name="Switch between light and dark").click()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.reload()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == background
    assert background != "rgb(246, 247, 249)"  # the light background


def test_screenshots_of_the_chat_and_the_tasks_page(new_page, live_server_url):
    """At desktop and phone width, light and dark. Saved under .artifacts/screenshots/; with
    TALORYS_UPDATE_SCREENSHOTS=1 into docs/screenshots/ (the ones the README shows)."""
    seed(live_server_url)
    target = (
        SCREENSHOTS
        if os.environ.get("TALORYS_UPDATE_SCREENSHOTS") == "1"
        else (ARTIFACTS.parent / "screenshots")
    )
    target.mkdir(parents=True, exist_ok=True)
    sizes = (("desktop", DESKTOP, False), ("phone", PHONE, True))
    for (size, viewport, mobile), scheme in itertools.product(sizes, ("light", "dark")):
        label = size if scheme == "light" else f"{size}-dark"
        page = new_page(viewport, mobile=mobile)
        page.emulate_media(color_scheme=scheme)
        log_in(page, live_server_url)
        page.locator("#text").fill("add a task to call the plumber tomorrow")
        page.keyboard.press("Enter")
        page.locator(".msg.assistant").last.wait_for()
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(500)
        page.screenshot(path=str(target / f"chat-{label}.png"))
        page.goto(f"{live_server_url}/tasks/")
        page.screenshot(path=str(target / f"tasks-{label}.png"), full_page=not mobile)
        assert (target / f"chat-{label}.png").stat().st_size > 5_000
