"""What is refused, with a clear 4xx in the error envelope, and changes nothing: too big, not a
known export, broken JSON (also midway, after conversations were written), and unsafe zips."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from agent.models import Conversation, Message
from imports.models import ImportedItem, ImportRun
from talorys.history.models import Change
from talorys.workspace.models import Note
from tests.imports.exports import chatgpt_conversation, chatgpt_zip, post, zipped


def _nothing_here() -> bool:
    return not any(
        model.objects.exists()
        for model in (ImportRun, ImportedItem, Conversation, Message, Note, Change)
    )


def _refused(response, status: int = 422) -> str:
    assert response.status_code == status, response.content
    assert _nothing_here()
    return response.json()["error"]["message"]


def test_a_file_past_the_limit_is_refused_before_it_is_read(api, settings):
    settings.BODY_LIMITS = {"/api/imports": 1000}

    response = post(api, chatgpt_zip([chatgpt_conversation()] * 3))

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "TOO_LARGE"
    assert _nothing_here()


def test_an_unknown_format_names_the_kinds_accepted(api):
    for content in (b'{"format": "talorys-backup"}', b'[{"hello": 1}]', zipped({"a.txt": "hi"})):
        message = _refused(post(api, content, name="conversations.json"))
        assert "ChatGPT" in message and "Claude" in message and "Open WebUI" in message
        assert "Markdown" in message


def test_broken_json_is_refused(api):
    message = _refused(post(api, b'[{"mapping": {', name="conversations.json"))

    assert "not valid JSON" in message


def test_a_failure_midway_leaves_nothing(api):
    # The first conversation is whole (and written), then the file breaks off.
    whole = json.dumps([chatgpt_conversation(), chatgpt_conversation("c-2")])
    broken = whole[: len(whole) // 2 + len(whole) // 4].encode()

    message = _refused(post(api, broken, name="conversations.json"))

    assert "not valid JSON" in message


@pytest.mark.parametrize(
    "name", ["../evil.md", "notes/../../evil.md", "/etc/evil.md", "C:/evil.md"]
)
def test_a_name_leading_outside_the_zip_is_refused(api, name):
    content = zipped({"ok.md": "fine", name: "evil"})

    assert "outside" in _refused(post(api, content))


def test_a_zip_inside_the_zip_is_refused(api):
    content = zipped({"ok.md": "fine", "more/inner.zip": zipped({"deep.md": "x"})})

    assert "archives inside" in _refused(post(api, content))


def test_a_zip_bomb_is_refused_from_its_directory(api):
    content = zipped({"bomb.md": b"\0" * (4 * 1024 * 1024)})

    assert "zip bomb" in _refused(post(api, content))


def test_too_many_entries_are_refused(api, monkeypatch):
    monkeypatch.setattr("imports.readers.archive.ENTRIES_MAX", 5)
    content = zipped({f"note-{n}.md": "x" for n in range(6)})

    assert "at most 5" in _refused(post(api, content))


def test_a_damaged_zip_is_refused(api):
    content = bytearray(chatgpt_zip([chatgpt_conversation()]))
    content[40:60] = b"\xff" * 20

    assert "damaged" in _refused(post(api, bytes(content)))


def test_a_request_without_a_file_is_refused(api):
    response = api.client.post("/api/imports", {}, headers={"X-CSRFToken": api.csrf_token})

    assert "file" in _refused(response)


def test_an_empty_export_is_refused(api):
    assert "nothing to import" in _refused(post(api, b"[]", name="conversations.json"))


def test_a_stored_zip_of_a_large_member_is_not_taken_for_a_bomb(api):
    # Stored (not compressed): declared and packed sizes are the same; nothing to refuse.
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        long = chatgpt_conversation()
        long["mapping"]["a2"]["message"]["content"]["parts"] = ["word " * 400_000]
        archive.writestr("conversations.json", json.dumps([long]))

    response = post(api, out.getvalue(), dry_run=True)

    assert response.status_code == 200, response.content
    assert response.json()["counts"]["messages"] == 4
