"""The three chat exports, one conversation at a time: each ``*_chat`` takes one item of the
export's top-level array (a dict, as ijson built it) and gives a ``Chat`` of the branch the
export marks as current, or None when nothing in it is kept.

Kept: the owner's and the assistant's messages with text. Left out: system, tool and hidden
messages (ChatGPT's custom instructions and tool calls), and empty ones. A part that is not
text (an image, a file) is a placeholder in the text ("[image]") so the turn still reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from imports.models import Source
from imports.readers.items import Chat, Turn, instant, text_of

ROLES = {"user": "user", "human": "user", "assistant": "assistant"}
# ChatGPT's content types that hold what was said; the others are tool code, its output,
# reasoning and settings.
CHATGPT_TEXT_TYPES = ("text", "multimodal_text")
# ChatGPT's non-text parts, as the text says them.
PLACEHOLDERS = {
    "image_asset_pointer": "[image]",
    "audio_transcription": "",  # its text is the part's "text", read below
    "audio_asset_pointer": "[audio]",
    "real_time_user_audio_video_asset_pointer": "[audio]",
}


def _branch(nodes: dict[str, Any], current: Any, parent_key: str) -> list[dict[str, Any]]:
    """The nodes from the root down to ``current``, walking each one's parent (a cycle or a
    missing node ends the walk: what was reached is the branch)."""
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(current, str) and current in nodes and current not in seen:
        seen.add(current)
        node = nodes[current]
        if not isinstance(node, dict):
            break
        path.append(node)
        current = node.get(parent_key)
    path.reverse()
    return path


def _last_leaf(nodes: dict[str, Any], children_key: str) -> str | None:
    """Without a current node: the last node with no children (the latest branch's end)."""
    leaves = [
        key for key, node in nodes.items() if isinstance(node, dict) and not node.get(children_key)
    ]
    return leaves[-1] if leaves else None


def _chatgpt_part(part: Any) -> str:
    if isinstance(part, str):
        return text_of(part)
    if isinstance(part, dict):
        kind = part.get("content_type")
        if kind == "audio_transcription":
            return text_of(part.get("text"))
        return PLACEHOLDERS.get(str(kind), "[attachment]")
    return ""


def _chatgpt_turn(node: dict[str, Any]) -> Turn | None:
    message = node.get("message")
    if not isinstance(message, dict):
        return None
    role = ROLES.get(str((message.get("author") or {}).get("role")))
    metadata = message.get("metadata") or {}
    content = message.get("content") or {}
    hidden = isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation")
    # An assistant message to a tool ("python", "browser") is the tool's call, not a reply.
    to_tool = message.get("recipient") not in (None, "all")
    if role is None or hidden or to_tool or not isinstance(content, dict):
        return None
    if content.get("content_type") not in CHATGPT_TEXT_TYPES:
        return None
    parts = [_chatgpt_part(part) for part in content.get("parts") or []]
    text = "\n\n".join(part for part in parts if part.strip())
    if not text.strip():
        return None
    ident = message.get("id") or node.get("id")
    return Turn(
        external_id=str(ident), role=role, text=text, when=instant(message.get("create_time"))
    )


def chatgpt_chat(raw: dict[str, Any]) -> Chat | None:
    nodes = raw.get("mapping")
    if not isinstance(nodes, dict):
        return None
    current = raw.get("current_node") or _last_leaf(nodes, "children")
    turns = [turn for node in _branch(nodes, current, "parent") if (turn := _chatgpt_turn(node))]
    ident = raw.get("conversation_id") or raw.get("id")
    if not ident:
        return None
    return Chat(
        external_id=str(ident),
        title=text_of(raw.get("title")),
        created=instant(raw.get("create_time")),
        updated=instant(raw.get("update_time")),
        turns=turns,
    )


def _claude_text(message: dict[str, Any]) -> str:
    text = text_of(message.get("text"))
    if not text.strip():
        blocks = message.get("content") or []
        text = "\n\n".join(
            text_of(block.get("text"))
            for block in blocks
            if isinstance(block, dict) and block.get("type") == "text"
        )
    names = [
        text_of(item.get("file_name"))
        for key in ("attachments", "files")
        for item in message.get(key) or []
        if isinstance(item, dict)
    ]
    shown = [f"[attachment: {name}]" for name in names if name]
    return "\n\n".join(part for part in [text, *shown] if part.strip())


def _claude_messages(raw: dict[str, Any]) -> list[Any]:
    """The messages of the branch shown: walked from ``current_leaf_message_uuid`` through
    each ``parent_message_uuid`` where the export has them (the web app's own JSON); else the
    flat list of the account export, where an edited or retried message is a run of messages of
    one sender (the answers of the other branches are not in it) and the last of the run is the
    one shown."""
    messages = [m for m in raw.get("chat_messages") or [] if isinstance(m, dict)]
    nodes = {str(m["uuid"]): m for m in messages if m.get("uuid")}
    leaf = raw.get("current_leaf_message_uuid")
    if leaf in nodes and any("parent_message_uuid" in m for m in messages):
        return _branch(nodes, leaf, "parent_message_uuid")
    return messages


def claude_chat(raw: dict[str, Any]) -> Chat | None:
    ident = raw.get("uuid")
    if not ident:
        return None
    turns: list[Turn] = []
    for index, message in enumerate(_claude_messages(raw)):
        role = ROLES.get(str(message.get("sender")))
        text = _claude_text(message)
        if not (role and text.strip()):
            continue
        turn = Turn(
            external_id=str(message.get("uuid") or index),
            role=role,
            text=text,
            when=instant(message.get("created_at")),
        )
        if turns and turns[-1].role == role:
            turns[-1] = turn  # a fork: the later variant is the one shown
        else:
            turns.append(turn)
    return Chat(
        external_id=str(ident),
        title=text_of(raw.get("name")),
        created=instant(raw.get("created_at")),
        updated=instant(raw.get("updated_at")),
        turns=turns,
    )


def _webui_turn(message: Any, index: int) -> Turn | None:
    if not isinstance(message, dict):
        return None
    role = ROLES.get(str(message.get("role")))
    text = text_of(message.get("content"))
    if role is None or not text.strip():
        return None
    return Turn(
        external_id=str(message.get("id") or index),
        role=role,
        text=text,
        when=instant(message.get("timestamp")),
    )


def openwebui_chat(raw: dict[str, Any]) -> Chat | None:
    chat = raw.get("chat")
    ident = raw.get("id")
    if not isinstance(chat, dict) or not ident:
        return None
    history = chat.get("history") or {}
    nodes = history.get("messages") if isinstance(history, dict) else None
    if isinstance(nodes, dict) and nodes:
        current = history.get("currentId") or _last_leaf(nodes, "childrenIds")
        branch: list[Any] = _branch(nodes, current, "parentId")
    else:  # an older export: the list of the current branch only
        branch = list(chat.get("messages") or [])
    turns = [turn for index, message in enumerate(branch) if (turn := _webui_turn(message, index))]
    return Chat(
        external_id=str(ident),
        title=text_of(raw.get("title")) or text_of(chat.get("title")),
        created=instant(raw.get("created_at")) or instant(chat.get("timestamp")),
        updated=instant(raw.get("updated_at")),
        turns=turns,
    )


READERS: dict[str, Callable[[dict[str, Any]], Chat | None]] = {
    Source.CHATGPT: chatgpt_chat,
    Source.CLAUDE: claude_chat,
    Source.OPENWEBUI: openwebui_chat,
}


def chat_kind(first: Any) -> Source | None:
    """Which export a conversation like ``first`` (the array's first item) comes from."""
    if not isinstance(first, dict):
        return None
    if isinstance(first.get("mapping"), dict):
        return Source.CHATGPT
    if isinstance(first.get("chat_messages"), list):
        return Source.CLAUDE
    chat = first.get("chat")
    if isinstance(chat, dict) and ("history" in chat or "messages" in chat):
        return Source.OPENWEBUI
    return None
