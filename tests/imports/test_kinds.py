"""Each kind of export: the preview says what it is and what it would add; the import keeps
titles, roles, order, times and only the branch the export marks as current."""

from __future__ import annotations

import datetime as dt
import json

from agent.models import Conversation, Origin
from talorys.workspace.models import Note
from tests.imports.exports import (
    T0,
    chatgpt_conversation,
    chatgpt_zip,
    claude_conversation,
    openwebui_chat,
    post,
    vault_zip,
    zipped,
)


def _at(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC)


def _messages(conversation: Conversation) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in conversation.messages.order_by("id")]


def test_a_chatgpt_zip_is_previewed_then_imported_with_its_current_branch(api):
    export = chatgpt_zip([chatgpt_conversation(), chatgpt_conversation("c-2", "Second chat")])

    preview = post(api, export, name="anything.bin", dry_run=True)

    assert preview.status_code == 200, preview.content
    body = preview.json()
    assert (body["dry_run"], body["source"], body["kind"]) == (True, "chatgpt", "ChatGPT export")
    assert body["counts"] == {"conversations": 2, "messages": 8, "notes": 0, "attachments": 0}
    assert body["first"] == ["Planning the garden", "Second chat"]
    assert not Conversation.objects.exists()

    applied = post(api, export)

    assert applied.status_code == 200, applied.content
    assert applied.json()["added"] == {"conversations": 2, "messages": 8, "notes": 0, "files": 0}
    conversation = Conversation.objects.get(title="Planning the garden")
    assert conversation.origin == Origin.IMPORT
    assert (conversation.created_at, conversation.updated_at) == (_at(T0), _at(T0 + 60))
    assert _messages(conversation) == [
        ("user", "What to plant in May?"),
        ("assistant", "Beans and courgettes."),
        ("user", "[image]\n\nAnd this bed?"),
        ("assistant", "Plant lettuce there."),
    ]
    messages = list(conversation.messages.order_by("id"))
    assert [m.created_at for m in messages] == [_at(T0 + s) for s in (10, 30, 40, 60)]
    assert [m.parent_id for m in messages] == [None, *[m.pk for m in messages[:-1]]]
    assert {m.origin for m in messages} == {Origin.IMPORT}


def test_a_chatgpt_conversations_json_alone_is_read_from_its_content(api):
    response = post(api, json.dumps([chatgpt_conversation()]).encode(), name="export.txt")

    assert response.status_code == 200, response.content
    assert response.json()["source"] == "chatgpt"
    assert Conversation.objects.get().title == "Planning the garden"


def test_a_json_saved_with_a_byte_order_mark_is_read(api):
    body = "\ufeff" + json.dumps([openwebui_chat()])

    alone = post(api, body.encode(), name="chats.json", dry_run=True)
    zipped_up = post(api, zipped({"conversations.json": body}), dry_run=True)

    assert alone.status_code == 200, alone.content
    assert zipped_up.status_code == 200, zipped_up.content
    assert alone.json()["first"] == zipped_up.json()["first"] == ["Tax questions"]


def test_a_claude_export_keeps_its_turns_and_names_its_files(api):
    export = zipped({"conversations.json": json.dumps([claude_conversation()]), "users.json": "[]"})

    preview = post(api, export, dry_run=True).json()
    response = post(api, export)

    assert (preview["source"], preview["first"]) == ("claude", ["Bread recipe"])
    assert response.status_code == 200, response.content
    conversation = Conversation.objects.get()
    assert conversation.title == "Bread recipe"
    assert _messages(conversation) == [
        ("user", "How long do I proof sourdough?\n\n[attachment: starter.jpg]"),
        ("assistant", "Four to six hours at room temperature."),
    ]
    first = conversation.messages.order_by("id").first()
    assert first is not None and first.created_at == dt.datetime(2024, 3, 1, 9, tzinfo=dt.UTC)
    assert conversation.created_at == dt.datetime(2024, 3, 1, 9, tzinfo=dt.UTC)


def test_a_claude_fork_keeps_the_variant_shown(api):
    flat = claude_conversation("flat")
    first, answer, _empty = flat["chat_messages"]
    edited = {**first, "uuid": "m-1b", "text": "How long at 18 degrees?", "content": []}
    flat["chat_messages"] = [first, edited, answer]
    tree = claude_conversation("tree", "Tree")
    old = {**answer, "uuid": "m-2-old", "content": [{"type": "text", "text": "Old answer"}]}
    tree["chat_messages"] = [
        {**first, "parent_message_uuid": "00000000-0000-4000-8000-000000000000"},
        {**old, "parent_message_uuid": "m-1"},
        {**answer, "parent_message_uuid": "m-1"},
    ]
    # The branch shown is the older answer: only the parents say so, not the order.
    tree["current_leaf_message_uuid"] = "m-2-old"

    response = post(api, json.dumps([flat, tree]).encode(), name="conversations.json")

    assert response.status_code == 200, response.content
    assert _messages(Conversation.objects.get(title="Bread recipe")) == [
        ("user", "How long at 18 degrees?\n\n[attachment: starter.jpg]"),
        ("assistant", "Four to six hours at room temperature."),
    ]
    assert [text for _, text in _messages(Conversation.objects.get(title="Tree"))] == [
        "How long do I proof sourdough?\n\n[attachment: starter.jpg]",
        "Old answer",
    ]


def test_an_open_webui_export_keeps_the_branch_its_current_id_marks(api):
    export = json.dumps([openwebui_chat()]).encode()

    preview = post(api, export, name="chat-export.json", dry_run=True).json()
    response = post(api, export, name="chat-export.json")

    assert (preview["kind"], preview["counts"]["messages"]) == ("Open WebUI export", 3)
    assert response.status_code == 200, response.content
    conversation = Conversation.objects.get()
    assert conversation.title == "Tax questions"
    assert _messages(conversation) == [
        ("user", "Can I deduct my bike?"),
        ("assistant", "Only for work trips."),
        ("user", "Thanks!"),
    ]
    assert [m.created_at for m in conversation.messages.order_by("id")] == [
        _at(1_710_000_000),
        _at(1_710_000_020),
        _at(1_710_000_030),
    ]


def test_a_vault_becomes_notes_with_tags_and_counts_its_attachments(api):
    preview = post(api, vault_zip(), name="vault.zip", dry_run=True).json()

    assert (preview["source"], preview["counts"]["notes"], preview["counts"]["attachments"]) == (
        "vault",
        3,
        1,
    )
    assert preview["first"] == ["Garden plan", "Clients", "Welcome"]
    # A preview reads no file's content: each attachment is one the import would try.
    assert "1 attachment would be added to Files." in preview["lines"]

    response = post(api, vault_zip(), name="vault.zip")

    assert response.status_code == 200, response.content
    notes = {note.title: note for note in Note.objects.all()}
    assert set(notes) == {"Garden plan", "Clients", "Welcome"}
    assert notes["Garden plan"].content == (
        "Tags: #Projects #outdoors #spring\n\nSow beans in May. Links to [[Welcome]]."
    )
    assert notes["Clients"].content == "Tags: #Projects/Work #clients\n\nAcme pays late."
    assert notes["Welcome"].content == "# Welcome\n\nSee [[Garden]]."
    assert notes["Garden plan"].created_at == dt.datetime(2024, 2, 1, 8, tzinfo=dt.UTC)
    # Its photo.png is not a PNG: the files app refuses it, and the report says so.
    [refused] = [line for line in response.json()["lines"] if "not imported" in line]
    assert refused.startswith("1 attachment not imported: Projects/photo.png (")


def test_a_vaults_pdf_and_image_become_files_once_and_go_to_the_bin_with_the_import(api):
    from files.models import File
    from imports.models import ImportRun
    from tests.files.makers import text_pdf

    png = b"\x89PNG\r\n\x1a\n" + b"\1" * 100
    vault = zipped(
        {
            "Vault/Garden.md": "Sow beans. ![[plan.pdf]]",
            "Vault/files/plan.pdf": text_pdf([["Beans in May."]]),
            "Vault/files/bed.png": png,
            "Vault/files/tool.exe": b"MZ\x90\x00 not a file Talorys takes",
        }
    )

    report = post(api, vault, name="vault.zip").json()

    files = {f.name: f for f in File.objects.live()}
    assert set(files) == {"plan.pdf", "bed.png"}
    assert files["bed.png"].status == "ready" and files["plan.pdf"].content_type == (
        "application/pdf"
    )
    assert "2 attachments were added to Files." in report["lines"]
    assert any(
        line.startswith("1 attachment not imported: files/tool.exe (") for line in report["lines"]
    )
    assert report["added"]["files"] == 2
    # Again: nothing new, the files are the same rows.
    again = post(api, vault, name="vault.zip").json()
    assert again["added"]["files"] == 0 and File.objects.count() == 2
    # The import to the bin takes its files with it; its restore brings them back.
    run = ImportRun.objects.order_by("pk").first()
    *_, entry = [c for c in api.get("/api/changes").json()["items"] if c["kind"] == "import"]
    assert api.post(f"/api/changes/{entry['id']}/revert").status_code == 200
    assert not File.objects.live().exists()
    assert api.post(f"/api/bin/import/{run.pk}/restore").status_code == 204
    assert File.objects.live().count() == 2
