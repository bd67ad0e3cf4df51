"""/changes/: what the assistant changed, newest first, each with a diff and Revert (the
change_revert service); a change that can no longer be reverted says why."""

from __future__ import annotations

import pytest

from talorys.history.models import Change
from talorys.lib.actors import Actor
from talorys.owner.selectors import owner_settings_get
from talorys.workspace import services
from talorys.workspace.models import Note, Task

CHAT = Actor(source="chat", conversation_id=41, message_id=7)


def item_html(body: str, change: Change) -> str:
    start = body.index(f'data-change-id="{change.pk}"')
    end = body.find("data-change-id=", start + 1)
    return body[start : end if end != -1 else len(body)]


def test_the_model_s_changes_are_listed_with_a_word_diff_and_old_to_new(signed_in):
    note = services.note_create(title="Trip", content="Pack the red bag", actor=CHAT)
    services.note_update(note_id=note.pk, content="Pack the blue bag", actor=CHAT)
    task = services.task_create(title="Book the train", actor=CHAT)
    services.task_complete(task_id=task.pk, actor=Actor(source="automation:3"))
    services.note_create(title="My own note")  # the owner's: not the assistant's change

    body = signed_in.get("/changes/").content.decode()

    assert "My own note" not in body
    assert body.index("Book the train") < body.index("Trip")  # newest first
    assert "<del>red</del><ins>blue</ins>" in body
    assert "open</del> → <ins>done" in body
    assert "by automation 3 (scheduled)" in body
    assert '<a href="/c/41/">Conversation 41</a>' in body


def test_revert_puts_the_item_back_and_the_change_then_says_it_was_reverted(signed_in):
    note = services.note_create(title="Trip", content="Pack the red bag")
    services.note_update(note_id=note.pk, content="Pack the blue bag", actor=CHAT)
    change = Change.objects.filter(source="chat").get()

    page = signed_in.post("/changes/", {"change_id": change.pk}, follow=True)

    assert Note.objects.get(pk=note.pk).content == "Pack the red bag"
    assert "Reverted." in page.content.decode()
    row = item_html(signed_in.get("/changes/").content.decode(), change)
    assert "Already reverted." in row and ">Revert</button>" not in row


def test_a_change_overtaken_by_the_owner_cannot_be_reverted_and_says_why(signed_in):
    task = services.task_create(title="Call the bank", actor=CHAT)
    services.task_update(task_id=task.pk, title="Call the bank", details="About the card")
    renamed = services.task_update(task_id=task.pk, title="Call Anna", actor=CHAT)
    services.task_update(task_id=renamed.pk, title="Call Anna today")  # the owner, since
    newest = Change.objects.filter(source="chat").order_by("-id").first()

    row = item_html(signed_in.get("/changes/").content.decode(), newest)
    assert "changed since" in row and ">Revert</button>" not in row

    page = signed_in.post("/changes/", {"change_id": newest.pk}, follow=True)
    assert "changed since" in page.content.decode()
    assert Task.objects.get(pk=task.pk).title == "Call Anna today"


@pytest.mark.parametrize(
    ("change_id", "said"),
    [("999999", "does not exist"), ("abc", "is not an id"), ("", "Say which change")],
)
def test_bad_input_says_why_and_changes_nothing(signed_in, change_id, said):
    task = services.task_create(title="Water the plants", actor=CHAT)
    before = Change.objects.count()

    page = signed_in.post("/changes/", {"change_id": change_id}, follow=True)

    assert said in page.content.decode()
    assert Task.objects.live().filter(pk=task.pk).exists()
    assert Change.objects.count() == before


def test_two_thousand_changes_are_paginated_in_a_few_queries(
    signed_in, django_assert_max_num_queries
):
    note = services.note_create(title="Log", content="v0")
    Change.objects.bulk_create(
        Change(
            kind="note",
            object_id=note.pk,
            action="update",
            title="Log",
            before={"content": f"v{i}"},
            after={"content": f"v{i + 1}"},
            source="chat",
            conversation_id=i,
        )
        for i in range(2_000)
    )
    owner_settings_get()

    # Session, user, settings; the count and the page; the page's notes and their latest
    # changes (to say which can be reverted); the session's save.
    with django_assert_max_num_queries(10):
        page = signed_in.get("/changes/")

    body = page.content.decode()
    assert "Page 1 of 40" in body
    assert body.count(">Revert</button>") == 0  # v2000 is not the note's content
    assert body.count("changed since") == 50


def test_the_page_is_the_owner_s_only(client, db):
    services.task_create(title="Private", actor=CHAT)
    change = Change.objects.get()
    assert client.get("/changes/").status_code == 302
    assert client.post("/changes/", {"change_id": change.pk}).status_code == 302
    assert Task.objects.live().count() == 1
