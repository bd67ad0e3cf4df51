"""Fixtures for recall: items of every kind, and the fake server's embedder (the local one's
process is tests/conftest.py's ``local_embeddings``)."""

from __future__ import annotations

from typing import Any

import pytest

from agent.models import Conversation, Message
from automations.services.crud import automation_create
from memory import services as memory_services
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services

DAILY = {"type": "daily", "time": "09:00"}


def one_of_each(word: str) -> dict[str, Any]:
    """An item of every recallable kind, each mentioning ``word``."""
    conversation = Conversation.objects.create(title="Trip planning")
    return {
        "memory": memory_services.memory_create_unchecked(text=f"Sister Ana lives near {word}"),
        "task": services.task_create(title=f"Book the {word} ferry"),
        "note": services.note_create(title="Travel", content=f"Ferries leave {word} at 9."),
        "project": services.project_create(name=f"{word} house", description="Renovation"),
        "automation": automation_create(
            name="Ferry check", kind="reminder", message=f"Check {word} ferries", schedule=DAILY
        ),
        "message": Message.objects.create(
            conversation=conversation, role=Message.Role.USER, content=f"Is {word} far?"
        ),
    }


def use_fake_embeddings(server: Any) -> None:
    """Semantic recall on, through the fake server's /embeddings (bag-of-words vectors)."""
    owner_settings_update(
        semantic_enabled=True, embeddings_base_url=server.base_url, embeddings_model="fake-embed"
    )


@pytest.fixture
def keyword_recall(db) -> None:
    """Semantic recall off: the keyword engine alone (the owner's switch on /settings/)."""
    owner_settings_update(semantic_enabled=False)
