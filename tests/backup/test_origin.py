"""A backup says who made it: an export carries this installation's signature (an HMAC keyed by
SECRET_KEY), so the preview tells a file made here, unchanged, from one made elsewhere or edited
(its checksum recomputed, which anyone can do); both import once the owner confirms."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from backup.services import backup_import
from talorys.workspace.models import Task
from tests.backup.helpers import document, exported, raw, seed

pytestmark = pytest.mark.django_db


def _forged() -> bytes:
    """This installation's export, a title changed and the checksum recomputed to match."""
    doc = exported()
    doc["data"]["tasks"][0]["title"] = "Forged title"
    return raw(document(doc["data"]) | {"signature": doc["signature"]})


def test_an_export_from_here_previews_as_made_by_this_installation():
    seed()

    report = backup_import(source=raw(exported()), dry_run=True)

    assert report["made_here"] is True


def test_a_forged_file_previews_as_made_elsewhere_and_imports_after_confirmation(client, owner):
    seed()
    forged = _forged()
    client.force_login(owner)

    preview = client.post(
        "/backup/preview/",
        {"file": SimpleUploadedFile("b.json", forged, content_type="application/json")},
        follow=True,
    ).content.decode()

    assert "Not signed by this installation." in preview and "made-elsewhere" in preview
    assert "anyone can recompute it" in preview
    assert not Task.objects.filter(title="Forged title").exists()
    token = client.session["backup_stash"]["token"]
    client.post("/backup/import/", {"token": token}, follow=True)
    assert Task.objects.filter(title="Forged title").exists()


def test_the_page_shows_a_file_made_here_as_signed(client, owner):
    seed()
    client.force_login(owner)
    body = json.dumps(exported()).encode()

    page = client.post(
        "/backup/preview/",
        {"file": SimpleUploadedFile("b.json", body, content_type="application/json")},
        follow=True,
    ).content.decode()

    assert "Signed by this installation." in page and "made-here" in page


def test_the_api_preview_says_where_the_file_comes_from(api):
    seed()
    headers = {"X-CSRFToken": api.csrf_token}

    def preview(body: bytes) -> dict:
        response = api.client.post(
            "/api/backup/import?dry_run=1", body, content_type="application/json", headers=headers
        )
        assert response.status_code == 200, response.content
        return response.json()

    here, elsewhere = preview(raw(exported())), preview(_forged())

    assert here["made_here"] is True and here["origin"].startswith("Made by this installation")
    assert elsewhere["made_here"] is False and elsewhere["origin"].startswith("Made elsewhere")


def test_a_file_signed_by_another_installation_is_made_elsewhere():
    seed()
    with override_settings(SECRET_KEY="another installation's secret key, long enough to be one"):
        theirs = raw(exported())

    assert backup_import(source=theirs, dry_run=True)["made_here"] is False
