"""Files in the backup: the record, its passages and its bytes (in base64 parts, checked by
sha256 on import) come back; a damaged part refuses the whole import."""

from __future__ import annotations

import json

import pytest

from backup.rows import CONTENT_PART_BYTES
from backup.services import backup_import
from files import storage
from files.models import File, FilePassage
from talorys.lib.errors import ValidationFailed
from tests.backup.helpers import clear, document, exported, raw

pytestmark = pytest.mark.django_db


def test_a_file_comes_back_with_its_passages_and_its_bytes(upload):
    big = ("The roof costs 4000 euros. " * 12_000).encode()  # three parts
    file = upload("notes.txt", big)
    image = upload("photo.png", b"\x89PNG\r\n\x1a\n" + b"\1" * 100)
    before = exported()
    parts = before["data"]["file_contents"]
    assert [(p["sha256"], p["part"]) for p in parts if p["sha256"] == file.sha256] == [
        (file.sha256, n) for n in range(-(-len(big) // CONTENT_PART_BYTES))
    ]
    clear()
    for sha256 in (file.sha256, image.sha256):
        storage.blob_delete(sha256)

    report = backup_import(source=json.dumps(before).encode())

    assert report["kinds"]["file_contents"]["added"] == 2
    assert storage.blob_read(file.sha256) == big
    assert File.objects.get(pk=file.pk).status == "ready"
    assert FilePassage.objects.filter(file_id=file.pk).count() == file.passages.count() > 1
    after = exported()
    assert after["data"]["files"] == before["data"]["files"]
    assert after["data"]["file_contents"] == parts


def test_a_backup_made_before_files_still_imports(upload):
    report = backup_import(source=raw(document({"notes": []})))
    assert "file_contents" in report["kinds"]


def test_a_damaged_part_refuses_the_import_and_stores_nothing(upload):
    file = upload("notes.txt", b"the roof costs 4000 euros")
    data = exported()["data"]
    clear()
    storage.blob_delete(file.sha256)
    part = data["file_contents"][0]
    part["data"] = part["data"][:-4] + "AAAA"

    with pytest.raises(ValidationFailed, match="does not match its sha256"):
        backup_import(source=raw(document(data)))

    assert not File.objects.exists()
    assert not storage.blob_exists(file.sha256)


def test_a_blob_already_here_is_kept_and_counted_unchanged(upload):
    upload("notes.txt", b"the roof costs 4000 euros")
    report = backup_import(source=json.dumps(exported()).encode())
    assert report["kinds"]["file_contents"] == {
        "added": 0,
        "changed": 0,
        "unchanged": 1,
        "kept": 0,
    }


def test_a_messages_attachments_come_back_with_it(upload):
    from agent.models import Conversation, Message

    file = upload("notes.txt", b"the roof costs 4000 euros")
    conversation = Conversation.objects.create(title="Roof")
    message = Message.objects.create(conversation=conversation, role="user", content="Cost?")
    message.attachments.add(file)
    before = exported()
    assert [(r["message_id"], r["file_id"]) for r in before["data"]["message_attachments"]] == [
        (message.pk, file.pk)
    ]
    clear()
    storage.blob_delete(file.sha256)

    backup_import(source=json.dumps(before).encode())

    restored = Message.objects.get(pk=message.pk)
    assert list(restored.attachments.values_list("pk", flat=True)) == [file.pk]
