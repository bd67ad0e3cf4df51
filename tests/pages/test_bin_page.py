"""/bin/: every deleted item of every kind, newest first, with the days it has left; restore,
purge for good, empty. The same services as /api/bin."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from talorys.history.models import Change
from talorys.owner.selectors import owner_settings_get
from talorys.workspace import services
from talorys.workspace.models import Note, Task


def binned_task(title: str) -> Task:
    task = services.task_create(title=title)
    services.task_delete(task_id=task.pk)
    task.refresh_from_db()
    return task


def test_binned_items_of_every_kind_are_listed_newest_first_with_the_days_left(signed_in):
    old = binned_task("Old errand")
    Task.objects.filter(pk=old.pk).update(deleted_at=timezone.now() - dt.timedelta(days=28))
    note = services.note_create(title="Shopping list", content="milk")
    services.note_delete(note_id=note.pk)
    services.task_create(title="Still open")

    body = signed_in.get("/bin/").content.decode()

    assert body.index("Shopping list") < body.index("Old errand")  # newest first
    assert "Still open" not in body
    assert "2 days left" in body and "30 days left" in body
    assert 'data-kind="note"' in body and 'data-kind="task"' in body


def test_restore_brings_the_item_back(signed_in):
    task = binned_task("Water the plants")

    page = signed_in.post(
        "/bin/", {"action": "restore", "kind": "task", "id": task.pk}, follow=True
    )

    assert Task.objects.live().filter(pk=task.pk).exists()
    assert "is back" in page.content.decode()
    assert "Water the plants" not in signed_in.get("/bin/").content.decode()


def test_purge_deletes_one_for_good_and_empty_deletes_everything(signed_in):
    first, second, third = (binned_task(t) for t in ("One", "Two", "Three"))

    signed_in.post("/bin/", {"action": "purge", "kind": "task", "id": first.pk})
    assert not Task.objects.filter(pk=first.pk).exists()
    assert not Change.objects.filter(kind="task", object_id=first.pk).exists()
    assert Task.objects.filter(pk=second.pk).exists()

    page = signed_in.post("/bin/", {"action": "empty"}, follow=True)
    assert not Task.objects.filter(pk__in=[second.pk, third.pk]).exists()
    assert "2 items deleted for good" in page.content.decode()
    assert "The bin is empty." in page.content.decode()


def test_the_buttons_that_delete_for_good_ask_first(signed_in):
    binned_task("Errand")
    body = signed_in.get("/bin/").content.decode()
    assert body.count("data-confirm=") == 2  # purge the item, empty the bin


@pytest.mark.parametrize(
    ("form", "said"),
    [
        ({"action": "restore", "kind": "spaceship", "id": "1"}, "There is no kind"),
        ({"action": "restore", "kind": "task", "id": "999999"}, "no longer in the bin"),
        ({"action": "restore", "kind": "task", "id": "abc"}, "is not an id"),
        ({"action": "purge", "kind": "task", "id": ""}, "Say which item"),
        ({"action": "purge", "kind": "note", "id": "LIVE"}, "There is no note"),
        ({"action": "explode"}, "Unknown action"),
    ],
)
def test_bad_input_says_why_and_changes_nothing(signed_in, form, said):
    task = binned_task("Keep me binned")
    live = services.note_create(title="A live note")
    if form.get("id") == "LIVE":
        form = form | {"id": live.pk}  # a live item is not in the bin: it cannot be purged

    page = signed_in.post("/bin/", form, follow=True)

    assert said in page.content.decode()
    assert Task.objects.get(pk=task.pk).deleted_at is not None
    assert Note.objects.live().filter(pk=live.pk).exists()


def test_two_thousand_binned_tasks_are_paginated_in_a_few_queries(
    signed_in, django_assert_max_num_queries
):
    now = timezone.now()
    Task.objects.bulk_create(
        Task(title=f"Errand {i}", deleted_at=now - dt.timedelta(minutes=i)) for i in range(2_000)
    )
    binned_task("Deleted just now")
    owner_settings_get()

    # Session, user, settings; the count and the page of the bin; the page's tasks and who
    # deleted them; the session's save. Never one per item or per kind of item.
    with django_assert_max_num_queries(10):
        page = signed_in.get("/bin/")

    body = page.content.decode()
    assert "Page 1 of 41" in body
    assert body.index("Deleted just now") < body.index("Errand 0<")
    assert "Errand 48<" in body and "Errand 49<" not in body
    assert "by owner" in body  # who deleted it, from the change log


def test_the_page_is_the_owner_s_only(client, db):
    task = binned_task("Private")
    assert client.get("/bin/").status_code == 302
    assert (
        client.post("/bin/", {"action": "purge", "kind": "task", "id": task.pk}).status_code == 302
    )
    assert Task.objects.filter(pk=task.pk).exists()
