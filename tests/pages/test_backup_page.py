"""/backup/: Export is a download of the whole backup; Import is a file, then a preview per kind,
then Confirm (the same file, kept server-side for the session) or Cancel; a bad file is a
message above the page and changes nothing."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from backup.views import _stash_path
from talorys.workspace.models import Task
from tests.backup.helpers import clear, exported, fingerprint, seed


def _upload(body: bytes, name: str = "backup.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, body, content_type="application/json")


def test_the_page_offers_the_export_download_and_an_import_form(client, owner):
    client.force_login(owner)

    body = client.get("/backup/").content.decode()

    assert 'href="/api/backup/export"' in body and "Download a backup" in body
    assert 'type="file"' in body and 'action="/backup/preview/"' in body
    assert 'for="backup-file"' in body


def test_preview_shows_what_would_change_then_confirm_imports_it(client, owner):
    seed()
    document = json.dumps(exported()).encode()
    clear()
    client.force_login(owner)

    preview = client.post("/backup/preview/", {"file": _upload(document)}, follow=True)
    page = preview.content.decode()
    assert Task.objects.count() == 0
    assert "backup.json" in page and "Confirm import" in page
    assert '<th scope="row">tasks</th><td>2</td>' in page
    token = client.session["backup_stash"]["token"]
    done = client.post("/backup/import/", {"token": token}, follow=True).content.decode()

    assert Task.objects.count() == 2
    assert "Imported." in done and "tasks: 2 added" in done
    assert not _stash_path(token).exists() and "backup_stash" not in client.session


def test_cancel_drops_the_previewed_file_and_changes_nothing(client, owner):
    seed()
    client.force_login(owner)
    client.post("/backup/preview/", {"file": _upload(json.dumps(exported()).encode())})
    token = client.session["backup_stash"]["token"]
    before = fingerprint()

    page = client.post("/backup/cancel/", follow=True).content.decode()

    assert "nothing was changed" in page and not _stash_path(token).exists()
    assert fingerprint() == before


def test_a_bad_file_is_a_message_above_the_page_and_changes_nothing(client, owner):
    seed()
    client.force_login(owner)
    before = fingerprint()

    page = client.post("/backup/preview/", {"file": _upload(b"not json")}, follow=True)

    assert "not valid JSON" in page.content.decode()
    assert "backup_stash" not in client.session
    assert fingerprint() == before


def test_a_confirm_without_its_preview_is_refused(client, owner):
    client.force_login(owner)

    page = client.post("/backup/import/", {"token": "0" * 32}, follow=True).content.decode()

    assert "preview is gone" in page


def test_the_page_is_the_owner_s_only(client, db):
    assert client.get("/backup/").status_code == 302
    assert client.post("/backup/preview/").status_code == 302
