"""Small exports built as the tools write them (their public formats, trimmed to the fields
the import reads and a few it must ignore), generated here rather than kept as files."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

T0 = 1_700_000_000  # 2023-11-14 22:13:20 UTC


def _node(ident: str, parent: str | None, children: list[str], message: dict | None) -> dict:
    return {"id": ident, "message": message, "parent": parent, "children": children}


def _message(ident: str, role: str, parts: list[Any], at: float, **extra: Any) -> dict:
    return {
        "id": ident,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": at,
        "update_time": None,
        "content": {"content_type": extra.pop("content_type", "text"), "parts": parts},
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": extra.pop("metadata", {}),
        "recipient": extra.pop("recipient", "all"),
        **extra,
    }


def chatgpt_conversation(ident: str = "c-1", title: str = "Planning the garden") -> dict:
    """A ChatGPT conversation with a hidden system message, a regenerated answer (two branches:
    the current one is the second), an image in a question and a tool call with its result."""
    hidden = {"is_visually_hidden_from_conversation": True}
    image = {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-1"}
    mapping = {
        "root": _node("root", None, ["sys"], None),
        "sys": _node("sys", "root", ["u1"], _message("sys", "system", [""], T0, metadata=hidden)),
        "u1": _node(
            "u1",
            "sys",
            ["a1-old", "a1"],
            _message("u1", "user", ["What to plant in May?"], T0 + 10),
        ),
        "a1-old": _node(
            "a1-old", "u1", [], _message("a1-old", "assistant", ["The old answer"], T0 + 20)
        ),
        "a1": _node(
            "a1", "u1", ["u2"], _message("a1", "assistant", ["Beans and courgettes."], T0 + 30)
        ),
        "u2": _node(
            "u2",
            "a1",
            ["call"],
            _message(
                "u2", "user", [image, "And this bed?"], T0 + 40, content_type="multimodal_text"
            ),
        ),
        "call": _node(
            "call",
            "u2",
            ["out"],
            _message(
                "call", "assistant", ["print(1)"], T0 + 50, content_type="code", recipient="python"
            ),
        ),
        "out": _node(
            "out",
            "call",
            ["a2"],
            _message("out", "tool", ["1"], T0 + 55, content_type="execution_output"),
        ),
        "a2": _node(
            "a2", "out", [], _message("a2", "assistant", ["Plant lettuce there."], T0 + 60)
        ),
    }
    return {
        "title": title,
        "create_time": T0,
        "update_time": T0 + 60,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": "a2",
        "plugin_ids": None,
        "conversation_id": ident,
        "conversation_template_id": None,
        "id": ident,
    }


def claude_conversation(ident: str = "9f1c-uuid", name: str = "Bread recipe") -> dict:
    return {
        "uuid": ident,
        "name": name,
        "created_at": "2024-03-01T09:00:00.000000Z",
        "updated_at": "2024-03-01T09:05:00.000000Z",
        "account": {"uuid": "acc-1"},
        "chat_messages": [
            {
                "uuid": "m-1",
                "text": "How long do I proof sourdough?",
                "content": [{"type": "text", "text": "How long do I proof sourdough?"}],
                "sender": "human",
                "created_at": "2024-03-01T09:00:00.000000Z",
                "updated_at": "2024-03-01T09:00:00.000000Z",
                "attachments": [],
                "files": [{"file_name": "starter.jpg"}],
            },
            {
                "uuid": "m-2",
                "text": "",
                "content": [{"type": "text", "text": "Four to six hours at room temperature."}],
                "sender": "assistant",
                "created_at": "2024-03-01T09:01:00.000000Z",
                "updated_at": "2024-03-01T09:01:00.000000Z",
                "attachments": [],
                "files": [],
            },
            {
                "uuid": "m-3",
                "text": "",
                "content": [],
                "sender": "human",
                "created_at": "2024-03-01T09:02:00.000000Z",
                "attachments": [],
                "files": [],
            },
        ],
    }


def openwebui_chat(ident: str = "owui-1", title: str = "Tax questions") -> dict:
    """An Open WebUI chat whose answer was regenerated: history.currentId marks the second."""
    messages = {
        "q": {
            "id": "q",
            "parentId": None,
            "childrenIds": ["a-old", "a-new"],
            "role": "user",
            "content": "Can I deduct my bike?",
            "timestamp": 1_710_000_000,
        },
        "a-old": {
            "id": "a-old",
            "parentId": "q",
            "childrenIds": [],
            "role": "assistant",
            "content": "Old reply",
            "timestamp": 1_710_000_010,
            "model": "llama3",
        },
        "a-new": {
            "id": "a-new",
            "parentId": "q",
            "childrenIds": ["q2"],
            "role": "assistant",
            "content": "Only for work trips.",
            "timestamp": 1_710_000_020,
            "model": "llama3",
        },
        "q2": {
            "id": "q2",
            "parentId": "a-new",
            "childrenIds": [],
            "role": "user",
            "content": "Thanks!",
            "timestamp": 1_710_000_030,
        },
    }
    return {
        "id": ident,
        "user_id": "user-1",
        "title": title,
        "chat": {
            "id": "",
            "title": title,
            "models": ["llama3"],
            "params": {},
            "history": {"messages": messages, "currentId": "q2"},
            "messages": [messages[key] for key in ("q", "a-new", "q2")],
            "tags": [],
            "timestamp": 1_710_000_000_000,
            "files": [],
        },
        "updated_at": 1_710_000_030,
        "created_at": 1_710_000_000,
        "share_id": None,
        "archived": False,
    }


def zipped(files: dict[str, bytes | str], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


def chatgpt_zip(conversations: list[dict]) -> bytes:
    body = json.dumps(conversations)
    return zipped({"conversations.json": body, "chat.html": "<html></html>", "user.json": "{}"})


def vault_zip() -> bytes:
    return zipped(
        {
            "Vault/Welcome.md": "# Welcome\n\nSee [[Garden]].",
            "Vault/Projects/Garden.md": (
                "---\ntitle: Garden plan\ntags: [outdoors, spring]\ncreated: 2024-02-01T08:00:00Z\n---\n"
                "Sow beans in May. Links to [[Welcome]]."
            ),
            "Vault/Projects/Work/Clients.md": "---\ntags: clients\n---\nAcme pays late.",
            "Vault/Projects/photo.png": b"\x89PNG....",
            "Vault/.obsidian/app.json": "{}",
            "Vault/.obsidian/workspace.md": "not a note",
        }
    )


def upload(content: bytes, name: str = "export.zip") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


def post(api: Any, content: bytes, *, name: str = "export.zip", dry_run: bool = False) -> Any:
    path = "/api/imports" + ("?dry_run=true" if dry_run else "")
    return api.client.post(
        path, {"file": upload(content, name)}, headers={"X-CSRFToken": api.csrf_token}
    )
