"""/api/files as a client sees it: upload, list, read, download, bin, restore, purge; every
refusal answers the error envelope and stores nothing; tokens by scope."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from files.models import File
from files.storage import blob_name, files_storage
from talorys.accounts.services import api_token_create
from tests.files.makers import text_pdf

pytestmark = pytest.mark.django_db


def post_file(api, name: str, data: bytes, headers: dict | None = None):
    return api.client.post(
        "/api/files", {"file": SimpleUploadedFile(name, data)}, headers=api._headers(headers)
    )


def stored_blobs() -> list[Path]:
    root = Path(files_storage().location)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_upload_then_read_list_and_download(api, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        made = post_file(api, "report.pdf", text_pdf([["Budget"], ["The roof costs 4000."]]))
    assert made.status_code == 201, made.content
    body = made.json()
    assert {k: body[k] for k in ("name", "content_type", "status")} == {
        "name": "report.pdf",
        "content_type": "application/pdf",
        "status": "pending",
    }
    got = api.get(f"/api/files/{body['id']}").json()
    assert (got["status"], got["pages"]) == ("ready", 2)
    assert [f["id"] for f in api.get("/api/files").json()["items"]] == [body["id"]]
    content = api.get(f"/api/files/{body['id']}/content")
    assert content.status_code == 200
    assert b"".join(content.streaming_content).startswith(b"%PDF-")
    assert content["Content-Type"] == "application/pdf"
    assert content["X-Content-Type-Options"] == "nosniff"
    assert content["Content-Disposition"].startswith("inline")
    blob = stored_blobs()
    assert len(blob) == 1 and blob[0].stat().st_mode & 0o777 == 0o600


def test_uploaded_html_always_downloads_under_a_safe_name(api):
    made = post_file(api, 'x"; evil=.html', b"<html><script>alert(1)</script></html>")
    assert made.status_code == 201, made.content
    content = api.get(f"/api/files/{made.json()['id']}/content")
    assert content["Content-Type"].startswith("text/html")
    disposition = content["Content-Disposition"]
    assert disposition.startswith("attachment;")
    assert 'evil=.html"' not in disposition.replace('\\"', "")  # the quote is escaped


def test_the_same_bytes_twice_are_stored_once(api):
    for name in ("a.txt", "b.txt"):
        assert post_file(api, name, b"same words").status_code == 201
    assert File.objects.count() == 2
    assert len(stored_blobs()) == 1


@pytest.mark.parametrize(
    ("name", "data", "status", "words"),
    [
        ("report.pdf", b"just some words", 415, "is not a PDF file"),
        ("archive.zip", b"PK\x03\x04" + b"\0" * 40, 415, "damaged"),
        (
            "tool.exe",
            b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff",
            415,
            "Talorys accepts PDF",
        ),
        ("empty.txt", b"", 415, "empty"),
    ],
)
def test_a_refused_upload_stores_nothing(api, name, data, status, words):
    refused = post_file(api, name, data)
    assert refused.status_code == status, refused.content
    assert words in refused.json()["error"]["message"]
    assert File.objects.count() == 0 and stored_blobs() == []


def test_a_file_over_the_size_limit_is_refused(api, settings):
    settings.TALORYS_MAX_FILE_BYTES = 100
    refused = post_file(api, "big.txt", b"x" * 101)
    assert refused.status_code == 413
    assert refused.json()["error"]["code"] == "TOO_LARGE"
    assert File.objects.count() == 0 and stored_blobs() == []


def test_a_file_past_the_install_total_is_refused(api, settings):
    settings.TALORYS_MAX_FILES_TOTAL_BYTES = 150
    assert post_file(api, "one.txt", b"a" * 100).status_code == 201
    refused = post_file(api, "two.txt", b"b" * 100)
    assert refused.status_code == 413
    assert "this install allows" in refused.json()["error"]["message"]
    assert File.objects.count() == 1 and len(stored_blobs()) == 1
    # The same bytes again take no more room: accepted.
    assert post_file(api, "again.txt", b"a" * 100).status_code == 201


def test_a_read_token_reads_but_cannot_upload_or_delete(api, owner):
    file_id = post_file(api, "a.txt", b"words").json()["id"]
    _, raw = api_token_create(user=owner, name="reader", scope="read")
    reader = Client()
    auth = {"Authorization": f"Bearer {raw}"}
    assert reader.get(f"/api/files/{file_id}", headers=auth).status_code == 200
    assert reader.get(f"/api/files/{file_id}/content", headers=auth).status_code == 200
    upload = reader.post("/api/files", {"file": SimpleUploadedFile("b.txt", b"x")}, headers=auth)
    assert upload.status_code == 403
    assert reader.delete(f"/api/files/{file_id}", headers=auth).status_code == 403
    assert File.objects.live().count() == 1
    _, raw = api_token_create(user=owner, name="writer", scope="write")
    auth = {"Authorization": f"Bearer {raw}"}
    upload = reader.post("/api/files", {"file": SimpleUploadedFile("b.txt", b"x")}, headers=auth)
    assert upload.status_code == 201


def test_bin_delete_restore_and_purge(api, django_capture_on_commit_callbacks):
    file_id = post_file(api, "a.txt", b"the roof costs 4000").json()["id"]
    assert api.delete(f"/api/files/{file_id}").status_code == 204
    assert api.get(f"/api/files/{file_id}").status_code == 404
    assert api.get("/api/files").json()["items"] == []
    assert api.get("/api/search", {"q": "roof", "kinds": "files"}).json()["items"] == []
    assert [i["kind"] for i in api.get("/api/bin").json()["items"]] == ["file"]
    assert api.post(f"/api/bin/file/{file_id}/restore").status_code == 204
    assert api.get(f"/api/files/{file_id}").status_code == 200
    assert api.delete(f"/api/files/{file_id}").status_code == 204
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/api/bin/file/{file_id}").status_code == 204
    assert not File.objects.filter(pk=file_id).exists()
    assert stored_blobs() == []


def test_a_purge_keeps_a_blob_another_file_uses(api, django_capture_on_commit_callbacks):
    first = post_file(api, "a.txt", b"same").json()["id"]
    post_file(api, "b.txt", b"same")
    api.delete(f"/api/files/{first}")
    with django_capture_on_commit_callbacks(execute=True) as purged:
        assert api.delete(f"/api/bin/file/{first}").status_code == 204
    assert purged  # the release was asked for, and kept the blob
    assert len(stored_blobs()) == 1
    assert files_storage().exists(blob_name(File.objects.get().sha256))


def test_a_file_whose_content_is_lost_answers_404(api):
    file_id = post_file(api, "a.txt", b"words").json()["id"]
    for blob in stored_blobs():
        blob.unlink()
    missing = api.get(f"/api/files/{file_id}/content")
    assert missing.status_code == 404
    assert "missing from storage" in missing.json()["error"]["message"]
