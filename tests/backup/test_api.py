"""/api/backup: export streams one JSON document (session or token), import takes the owner's
session only, a raw JSON body or a file, refuses an oversized body with 413, and a dry run."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from talorys.accounts.services import api_token_create
from talorys.workspace.models import Task
from tests.backup.helpers import clear, document, exported, fingerprint, raw, seed


def _post_json(api, path: str, body: bytes):
    return api.client.post(
        path, body, content_type="application/json", headers={"X-CSRFToken": api.csrf_token}
    )


def _body(response) -> dict:
    return json.loads(b"".join(response.streaming_content))


def test_export_streams_one_json_document_with_its_checksum_and_signature_last(api):
    seed()

    response = api.get("/api/backup/export")

    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith('attachment; filename="talorys-backup-')
    doc = _body(response)
    assert (doc["format"], doc["version"]) == ("talorys-backup", 1)
    assert list(doc)[-2:] == ["checksum", "signature"]
    assert doc["checksum"].startswith("sha256:")
    assert doc["signature"].startswith("hmac-sha256:")
    assert [row["title"] for row in doc["data"]["tasks"]] == ["Water the beds", "Buy seeds"]


def test_a_read_token_may_export_but_never_import(owner):
    seed()
    _token, secret = api_token_create(user=owner, name="backup script", scope="read")
    script = Client(enforce_csrf_checks=True)
    headers = {"Authorization": f"Bearer {secret}"}

    exported_doc = _body(script.get("/api/backup/export", headers=headers))
    _write, write_secret = api_token_create(user=owner, name="writer", scope="write")
    refused = script.post(
        "/api/backup/import",
        raw(exported_doc),
        content_type="application/json",
        headers={"Authorization": f"Bearer {write_secret}"},
    )

    assert exported_doc["data"]["tasks"]
    assert refused.status_code in (401, 403)


def test_nobody_else_gets_an_export(anon_api):
    assert anon_api.get("/api/backup/export").status_code == 401


def test_import_a_raw_json_body_with_a_dry_run_first(api):
    seed()
    doc = exported()
    clear()
    before = fingerprint()
    body = raw(doc)

    preview = _post_json(api, "/api/backup/import?dry_run=1", body)
    assert preview.status_code == 200, preview.content
    assert fingerprint() == before
    done = _post_json(api, "/api/backup/import", body)

    assert done.status_code == 200
    assert preview.json()["kinds"] == done.json()["kinds"]
    assert done.json()["kinds"]["tasks"] == {"added": 2, "changed": 0, "unchanged": 0, "kept": 0}
    assert Task.objects.count() == 2


def test_import_a_multipart_file(api):
    seed()
    upload = SimpleUploadedFile("backup.json", raw(exported()), content_type="application/json")

    response = api.client.post(
        "/api/backup/import", {"file": upload}, headers={"X-CSRFToken": api.csrf_token}
    )

    assert response.status_code == 200
    assert response.json()["kinds"]["tasks"]["unchanged"] == 2


def test_a_bad_backup_is_a_422_envelope_naming_the_problem(api):
    seed()
    before = fingerprint()

    response = _post_json(api, "/api/backup/import", b'{"format": "talorys-backup"')

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "VALIDATION"
    assert "not valid JSON" in response.json()["error"]["message"]
    assert fingerprint() == before


def test_an_oversized_backup_is_refused_with_413_before_it_is_read(api, settings):
    seed()
    settings.BODY_LIMITS = {"/api/backup/import": 1000}
    before = fingerprint()
    body = raw(document({"notes": [{"id": 1, "title": "x" * 2000}]}))

    response = _post_json(api, "/api/backup/import", body)

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "TOO_LARGE"
    assert fingerprint() == before


def test_the_import_route_takes_more_than_other_routes(api, settings):
    # The default limit for every other route stays; the import's own is larger.
    big = raw(document({"notes": []})) + b" " * (settings.MAX_BODY_BYTES + 10)

    elsewhere = _post_json(api, "/api/notes", big)
    here = _post_json(api, "/api/backup/import?dry_run=1", big)

    assert elsewhere.status_code == 413
    assert here.status_code == 200, here.content
    assert (
        settings.BODY_LIMITS["/api/backup/import"] == settings.MAX_IMPORT_BYTES == 50 * 1024 * 1024
    )


def test_a_request_without_a_backup_is_refused(api):
    empty = _post_json(api, "/api/backup/import", b"")
    no_file = api.client.post(
        "/api/backup/import", {"other": "x"}, headers={"X-CSRFToken": api.csrf_token}
    )

    assert empty.status_code == 422 and "no backup" in empty.json()["error"]["message"]
    assert (
        no_file.status_code == 422 and "Choose a backup file" in no_file.json()["error"]["message"]
    )


def test_under_asgi_the_export_streams_piece_by_piece(owner, monkeypatch):
    # Django would read a sync iterator to its end before sending under ASGI; ours is async.
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    from backup import export

    seed()
    Task.objects.bulk_create(Task(title=f"Task {n} " + "x" * 100) for n in range(300))
    monkeypatch.setattr(export, "PIECE_BYTES", 4096)

    async def download() -> tuple[bool, list[bytes]]:
        client = AsyncClient()
        await client.aforce_login(owner)
        response = await client.get("/api/backup/export")
        pieces = [piece async for piece in response.streaming_content]
        return response.is_async, pieces

    is_async, pieces = async_to_sync(download)()

    assert is_async and len(pieces) > 5
    assert len(json.loads(b"".join(pieces))["data"]["tasks"]) == 302
