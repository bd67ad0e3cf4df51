"""Memories over the JSON API and through their services: every change leaves a revision."""

from __future__ import annotations

import threading
import time

import pytest
from django.utils import timezone

from memory import selectors, services
from memory.models import Memory, MemoryRevision
from talorys.lib.errors import NotFound, ValidationFailed
from tests.waiting import HANG_SECONDS


def revisions(memory_id: int) -> list[tuple[str, str, str, str]]:
    return list(
        MemoryRevision.objects.filter(memory_id=memory_id)
        .order_by("id")
        .values_list("action", "text", "category", "source")
    )


def rows() -> tuple[list[dict], list[dict]]:
    return (
        list(Memory.objects.order_by("pk").values()),
        list(MemoryRevision.objects.order_by("pk").values()),
    )


def test_memory_crud_over_the_api(api):
    created = api.post("/api/memories", {"text": " Lives in Lyon ", "category": "place"})
    assert created.status_code == 201, created.content
    memory = created.json()
    assert (memory["text"], memory["category"], memory["source"]) == (
        "Lives in Lyon",
        "place",
        "owner",
    )

    assert api.get(f"/api/memories/{memory['id']}").json()["text"] == "Lives in Lyon"

    patched = api.patch(f"/api/memories/{memory['id']}", {"text": "Lives in Lisbon"})
    assert patched.status_code == 200
    assert patched.json()["text"] == "Lives in Lisbon"
    assert patched.json()["category"] == "place"

    history = api.get(f"/api/memories/{memory['id']}/history").json()
    assert history["count"] == 2
    assert [(r["action"], r["text"]) for r in history["items"]] == [
        ("update", "Lives in Lisbon"),
        ("create", "Lives in Lyon"),
    ]

    assert api.delete(f"/api/memories/{memory['id']}").status_code == 204
    assert api.get(f"/api/memories/{memory['id']}").status_code == 404
    assert not Memory.objects.live().exists()  # in the bin; the history goes when it is purged
    assert api.delete(f"/api/bin/memory/{memory['id']}").status_code == 204
    assert not Memory.objects.exists()
    assert not MemoryRevision.objects.exists()  # purging erases the history too


def test_memory_list_filters_by_q_and_paginates(api):
    services.memory_create_unchecked(text="Prefers tea over coffee", category="preference")
    services.memory_create_unchecked(text="Sister is called Ana", category="person")
    services.memory_create_unchecked(text="Drinks green tea at 4pm")

    tea = api.get("/api/memories", {"q": "TEA"}).json()
    assert tea["count"] == 2
    assert {m["text"] for m in tea["items"]} == {
        "Prefers tea over coffee",
        "Drinks green tea at 4pm",
    }

    page = api.get("/api/memories", {"limit": 1, "offset": 1}).json()
    assert page["count"] == 3
    assert len(page["items"]) == 1


def test_memory_list_hides_soft_deleted_memories(api):
    gone = services.memory_create_unchecked(text="Old phone number")
    Memory.objects.filter(pk=gone.pk).update(deleted_at=timezone.now())

    assert api.get("/api/memories").json()["count"] == 0
    assert api.get(f"/api/memories/{gone.pk}").status_code == 404
    assert api.get(f"/api/memories/{gone.pk}/history").status_code == 404


def test_every_change_writes_a_revision_with_its_source(db):
    memory = services.memory_create_unchecked(
        text="Likes jazz", category="preference", source="chat"
    )
    services.memory_update_unchecked(
        memory_id=memory.pk, text="Likes jazz and blues", source="owner"
    )
    services.memory_update_unchecked(memory_id=memory.pk, category="fact", source="import")

    assert revisions(memory.pk) == [
        ("create", "Likes jazz", "preference", "chat"),
        ("update", "Likes jazz and blues", "preference", "owner"),
        ("update", "Likes jazz and blues", "fact", "import"),
    ]
    memory.refresh_from_db()
    assert memory.source == "import"
    assert [r.action for r in selectors.memory_history(memory_id=memory.pk)] == [
        "update",
        "update",
        "create",
    ]


def test_an_update_that_changes_nothing_writes_no_revision(api):
    memory = services.memory_create_unchecked(text="Likes jazz")

    services.memory_update_unchecked(memory_id=memory.pk, text="Likes jazz", category="fact")
    assert api.patch(f"/api/memories/{memory.pk}", {}).status_code == 200

    assert len(revisions(memory.pk)) == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "kwargs",
    [
        {"text": ""},
        {"text": "   "},
        {"text": "x" * (Memory.TEXT_MAX + 1)},
        {"text": "Likes jazz", "category": "hobby"},
        {"text": "Likes jazz", "source": "telepathy"},
    ],
)
def test_bad_memories_are_refused_and_nothing_is_written(kwargs):
    with pytest.raises(ValidationFailed):
        services.memory_create_unchecked(**kwargs)

    assert rows() == ([], [])


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"text": ""},
        {"text": "x" * 2_001},
        {"text": "Likes jazz", "category": "hobby"},
        {"text": "Likes jazz", "source": "chat"},  # the API always acts as the owner
        {"text": "Likes jazz", "importance": 5},
    ],
)
def test_bad_memory_input_over_the_api_creates_nothing(api, body):
    response = api.post("/api/memories", body)

    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "VALIDATION"
    assert rows() == ([], [])


@pytest.mark.parametrize(
    "body",
    [{"text": ""}, {"text": None}, {"category": None}, {"category": "hobby"}, {"colour": "red"}],
)
def test_bad_memory_patch_changes_nothing(api, body):
    memory = services.memory_create_unchecked(text="Likes jazz")
    before = rows()

    response = api.patch(f"/api/memories/{memory.pk}", body)

    assert response.status_code == 422, response.content
    assert rows() == before


def test_missing_memories_answer_404(api):
    for response in [
        api.get("/api/memories/999"),
        api.patch("/api/memories/999", {"text": "x"}),
        api.delete("/api/memories/999"),
        api.get("/api/memories/999/history"),
    ]:
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"
    with pytest.raises(NotFound):
        services.memory_update_unchecked(memory_id=999, text="x")
    with pytest.raises(NotFound):
        services.memory_delete(memory_id=999)


def test_memories_need_the_owner(anon_api):
    assert anon_api.get("/api/memories").status_code == 401
    assert anon_api.post("/api/memories", {"text": "Likes jazz"}).status_code == 401
    assert not Memory.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_corrections_both_survive(needs_postgres):
    """A correction that waits on another's lock sees its text instead of writing over it."""
    from django.db import connection, transaction

    memory = services.memory_create_unchecked(text="Lives in Lyon", category="fact")
    locked = threading.Event()
    errors: list[BaseException] = []

    def slow_text_change() -> None:
        try:
            with transaction.atomic():
                services.memory_update_unchecked(memory_id=memory.pk, text="Lives in Lisbon")
                locked.set()
                time.sleep(0.5)  # hold the row lock while the other correction starts
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
            locked.set()
        finally:
            connection.close()

    worker = threading.Thread(target=slow_text_change)
    worker.start()
    assert locked.wait(HANG_SECONDS)
    services.memory_update_unchecked(memory_id=memory.pk, category="place")
    worker.join(5)

    assert not errors
    memory.refresh_from_db()
    assert (memory.text, memory.category) == ("Lives in Lisbon", "place")
    assert revisions(memory.pk)[-1] == ("update", "Lives in Lisbon", "place", "owner")
