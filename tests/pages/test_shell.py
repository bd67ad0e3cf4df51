"""What every page shares: the header, the owner's zone, the manifest and icons."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.template import Context, Template
from django.utils import timezone

from talorys.owner.services.settings import owner_settings_update


@pytest.fixture
def owner_client(client, owner):
    client.force_login(owner)
    return client


def test_the_header_names_the_demo_model_and_links_every_page(owner_client):
    html = owner_client.get("/").content.decode()
    assert 'class="model-badge demo-badge"' in html and "Demo model" in html
    for path in ("/tasks/", "/projects/", "/notes/", "/memories/", "/automations/",
                 "/approvals/", "/changes/", "/notifications/", "/bin/", "/usage/",
                 "/backup/", "/settings/"):  # fmt: skip
        assert f'href="{path}"' in html
    assert 'aria-current="page">Chat' in html


@pytest.mark.parametrize(
    ("path", "current"),
    [
        ("/", "Chat"),
        ("/tasks/", "Tasks"),
        ("/settings/", "Settings"),
        ("/notifications/", "Notifications"),
    ],
)
def test_the_main_nav_marks_the_page_it_is_on_and_only_that_one(owner_client, path, current):
    html = owner_client.get(path).content.decode()
    nav = html[html.index('id="main-nav"') : html.index("</nav>")]
    assert re.findall(r'aria-current="page">(\w+)</a>', nav) == [current]


def test_a_conversation_and_a_task_are_marked_as_their_pages(owner_client):
    from agent.models import Conversation
    from talorys.workspace.models import Task

    conversation = Conversation.objects.create(title="Plans")
    task = Task.objects.create(title="Call Sam")
    for path, current in ((f"/c/{conversation.pk}/", "Chat"), (f"/tasks/{task.pk}/", "Tasks")):
        html = owner_client.get(path).content.decode()
        nav = html[html.index('id="main-nav"') : html.index("</nav>")]
        assert re.findall(r'aria-current="page">(\w+)</a>', nav) == [current], path


def test_the_header_names_a_configured_model(owner_client):
    owner_settings_update(model_base_url="http://127.0.0.1:9/v1", model_name="qwen2.5:7b")
    html = owner_client.get("/").content.decode()
    assert "qwen2.5:7b" in html and "demo-badge" not in html


def test_pages_show_times_in_the_owners_zone(rf, owner_client):
    owner_settings_update(time_zone="Asia/Tokyo")
    response = owner_client.get("/")
    assert 'data-time-zone="Asia/Tokyo"' in response.content.decode()
    # The zone is active while the page renders, and only then.
    assert timezone.get_current_timezone_name() == "UTC"


def test_the_zone_is_active_while_a_page_renders(owner_client, monkeypatch):
    owner_settings_update(time_zone="America/New_York")
    seen = {}
    from agent import views

    real = views.render

    def spy(request, template, context=None, **kw):
        moment = dt.datetime(2026, 7, 1, 12, 0, tzinfo=dt.UTC)
        seen["shown"] = Template('{{ m|date:"H:i" }}').render(Context({"m": moment}))
        return real(request, template, context, **kw)

    monkeypatch.setattr(views, "render", spy)
    owner_client.get("/")
    assert seen["shown"] == "08:00"  # 12:00 UTC is 08:00 in New York in July


def test_the_manifest_and_icons_are_public(client):
    manifest = client.get("/manifest.webmanifest")
    assert manifest.status_code == 200
    assert manifest["Content-Type"].startswith("application/manifest+json")
    body = manifest.json()
    assert body["start_url"] == "/" and body["display"] == "standalone"
    sizes = {icon["sizes"] for icon in body["icons"]}
    assert {"192x192", "512x512"} <= sizes


def test_a_signed_out_visitor_is_sent_to_the_login_page(client):
    response = client.get("/tasks/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_favicon_ico_leads_to_the_app_s_icon(client):
    from django.contrib.staticfiles import finders
    from django.templatetags.static import static

    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == static("talorys/icons/icon-192.png")
    with open(finders.find("talorys/icons/icon-192.png"), "rb") as icon:
        assert icon.read(4) == b"\x89PNG"
