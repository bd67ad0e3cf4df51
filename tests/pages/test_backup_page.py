"""/backup/: Export is a download of the whole backup; Import is a file, then a preview per kind,
then Confirm (the same file, kept server-side for the session) or Cancel; a bad file is a
message above the page and changes nothing."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from backup.views import _stash_path
from talorys.workspace.models import Task
from tests.backup.helpers import clear, document, exported, fingerprint, raw, seed


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
    assert '<th scope="row">Tasks</th><td>2</td>' in page
    assert "<summary>Tasks: 2 added</summary>" in page
    assert "<li>Water the beds</li>" in page and "<li>Buy seeds</li>" in page
    token = client.session["backup_stash"]["token"]
    done = client.post("/backup/import/", {"token": token}, follow=True).content.decode()

    assert Task.objects.count() == 2
    assert "Imported. Added 1 project, 2 tasks, 2 notes" in done
    assert "_" not in done.split("Imported.")[1].split("<")[0]  # words, not snake_case
    assert not _stash_path(token).exists() and "backup_stash" not in client.session


def test_the_preview_names_the_first_twenty_rows_it_would_add_or_change(client, owner):
    seed()
    data = exported()["data"]
    Task.objects.filter(title="Water the beds").update(title="Water the beds at dawn")
    for i in range(25):
        data["tasks"].append({**data["tasks"][1], "id": 1000 + i, "title": f"Extra <b>{i}</b>"})
    client.force_login(owner)

    page = client.post(
        "/backup/preview/", {"file": _upload(raw(document(data)))}, follow=True
    ).content.decode()

    assert "<summary>Tasks: 25 added, 1 changed (title differs)</summary>" in page
    assert "<li>Extra &lt;b&gt;0&lt;/b&gt;</li>" in page  # titles are text
    assert "<li>Extra &lt;b&gt;19&lt;/b&gt;</li>" in page
    assert "Extra &lt;b&gt;20" not in page
    assert "The first 20 of 25." in page
    changed = page.split("Would be changed")[1].split("</ul>")[0]
    assert "<li>Water the beds</li>" in changed  # the file's title, which the import would set
    assert Task.objects.filter(title="Water the beds at dawn").exists()


def test_coming_back_to_a_pending_preview_shows_it_and_the_file_chooser(client, owner):
    seed()
    client.force_login(owner)
    client.post("/backup/preview/", {"file": _upload(json.dumps(exported()).encode(), "a.json")})
    first = client.session["backup_stash"]["token"]

    page = client.get("/backup/").content.decode()
    assert "a.json" in page and "Confirm import" in page and "Discard this preview" in page
    assert 'type="file"' in page and "Or preview another file" in page

    # Another file replaces the pending preview.
    client.post("/backup/preview/", {"file": _upload(json.dumps(exported()).encode(), "b.json")})
    assert not _stash_path(first).exists()
    page = client.get("/backup/").content.decode()
    assert "b.json" in page and "a.json" not in page


def test_cancel_drops_the_previewed_file_and_changes_nothing(client, owner):
    seed()
    client.force_login(owner)
    client.post("/backup/preview/", {"file": _upload(json.dumps(exported()).encode())})
    token = client.session["backup_stash"]["token"]
    before = fingerprint()

    page = client.post("/backup/cancel/", follow=True).content.decode()

    assert "Preview discarded; nothing was imported or changed." in page
    assert not _stash_path(token).exists()
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
