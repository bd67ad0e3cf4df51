"""/memories/: current memories by category, search, add, edit, delete, the history with its
provenance and Revert, superseded facts and the contradictions waiting for the owner."""

from __future__ import annotations

import pytest

from memory import services
from memory.models import Memory, MemoryRevision
from talorys.lib.actors import Actor
from talorys.owner.services.settings import owner_settings_update


def test_current_memories_are_grouped_by_category_and_searchable(signed_in):
    services.memory_create_unchecked(text="Prefers window seats", category="preference")
    services.memory_create_unchecked(text="Sister Ana lives in Porto", category="person")
    old = services.memory_create_unchecked(text="Lives in Berlin")
    services.memory_create_unchecked(text="Binned fact")
    services.memory_delete(memory_id=Memory.objects.get(text="Binned fact").pk)
    new = services.memory_create_unchecked(text="Lives in Lisbon")
    services.memory_supersede(memory_id=old.pk, by_id=new.pk, source="owner")

    html = signed_in.get("/memories/").content.decode()

    assert (
        html.index("<h2>Fact</h2>")
        < html.index("<h2>Preference</h2>")
        < html.index("<h2>Person</h2>")
    )
    assert "Lives in Lisbon" in html and "Prefers window seats" in html
    assert "Lives in Berlin" not in html and "Binned fact" not in html
    found = signed_in.get("/memories/", {"q": "porto"}).content.decode()
    # Best first: by meaning, another city may follow (semantic recall is on by default).
    porto = found.index("Sister Ana lives in Porto")
    assert "Lives in Lisbon" not in found or porto < found.index("Lives in Lisbon")
    assert "Best matches" in found
    # Ranked by recall (stemmed words, best first), not a substring match.
    ranked = signed_in.get("/memories/", {"q": "living in Lisbon"}).content.decode()
    assert "Lives in Lisbon" in ranked and "Lives in Berlin" not in ranked
    assert ranked.index("Lives in Lisbon") < ranked.index("Sister Ana lives in Porto")


def test_the_owner_adds_a_memory_as_the_api_does(signed_in):
    response = signed_in.post(
        "/memories/", {"text": "Allergic to nuts", "category": "fact", "valid_from": "2025-01-02"}
    )

    assert response.status_code == 303
    memory = Memory.objects.get()
    assert (memory.text, memory.source, str(memory.valid_from)) == (
        "Allergic to nuts",
        "owner",
        "2025-01-02",
    )
    assert "Memory added." in signed_in.get("/memories/").content.decode()


@pytest.mark.parametrize(
    "form, message",
    [
        ({"text": "  "}, "Memory is empty: fill it in."),
        ({"text": "x", "category": "gossip"}, "Category must be one of"),
        ({"text": "x", "valid_from": "soon"}, "Holds since is not a date"),
        ({"text": "x", "valid_from": "2025-02-01", "valid_to": "2025-01-01"}, "must not be after"),
        ({"text": "x", "valid_to": "0001-01-01"}, "Holds until must be between 1900-01-01"),
    ],
)
def test_a_bad_memory_is_refused_and_nothing_is_stored(signed_in, form, message):
    response = signed_in.post("/memories/", form, follow=True)

    assert message in response.content.decode()
    assert Memory.objects.count() == 0


def test_edit_and_delete_to_the_bin(signed_in):
    memory = services.memory_create_unchecked(text="Drinks coffee")

    signed_in.post(
        f"/memories/{memory.pk}/edit/",
        {"text": "Drinks tea", "category": "preference", "valid_from": "", "valid_to": ""},
    )
    memory.refresh_from_db()
    assert (memory.text, memory.category) == ("Drinks tea", "preference")

    signed_in.post(f"/memories/{memory.pk}/delete/")
    memory.refresh_from_db()
    assert memory.deleted_at is not None
    assert signed_in.get(f"/memories/{memory.pk}/").status_code == 404


def test_history_shows_who_changed_it_from_which_conversation_and_reverts(signed_in):
    memory = services.memory_create_unchecked(text="Has a cat")
    services.memory_update_unchecked(
        memory_id=memory.pk,
        text="Has two cats",
        source="chat",
        actor=Actor(source="chat", conversation_id=41, message_id=7),
    )

    html = signed_in.get(f"/memories/{memory.pk}/").content.decode()
    assert 'href="/c/41/"' in html and "message 7" in html and "chat" in html
    assert html.count(">Revert</button>") == 2  # the update and the create

    update = memory.revisions.get(action=MemoryRevision.Action.UPDATE)
    change_id = _change_of(html, update)
    signed_in.post(f"/memories/{memory.pk}/revert/", {"change_id": change_id})

    memory.refresh_from_db()
    assert memory.text == "Has a cat"
    assert "Reverted" in signed_in.get(f"/memories/{memory.pk}/").content.decode()


def _change_of(html: str, revision: MemoryRevision) -> str:
    """The change id of the Revert form in the revision's row (rows are newest first)."""
    row = html.split("<tbody>")[1].split("</tr>")[0]
    assert revision.text in row
    return row.split('name="change_id" value="')[1].split('"')[0]


def test_a_revert_refused_changes_nothing(signed_in):
    memory = services.memory_create_unchecked(text="Has a cat")
    services.memory_update_unchecked(memory_id=memory.pk, text="Has two cats")
    html = signed_in.get(f"/memories/{memory.pk}/").content.decode()
    change_id = _change_of(html, memory.revisions.get(action="update"))
    services.memory_update_unchecked(memory_id=memory.pk, text="Has three cats")

    response = signed_in.post(
        f"/memories/{memory.pk}/revert/", {"change_id": change_id}, follow=True
    )

    assert "changed since" in response.content.decode()
    memory.refresh_from_db()
    assert memory.text == "Has three cats"


def test_a_change_of_another_item_is_not_reverted_from_a_memory_s_page(signed_in):
    from talorys.history.models import Change
    from talorys.workspace import services as workspace

    memory = services.memory_create_unchecked(text="Has a cat")
    task = workspace.task_create(title="Feed the cat")
    workspace.task_update(task_id=task.pk, title="Feed the cats")
    change = Change.objects.get(kind="task", action="update")

    response = signed_in.post(
        f"/memories/{memory.pk}/revert/", {"change_id": change.pk}, follow=True
    )

    assert f"Change {change.pk} is not a change of memory {memory.pk}" in response.content.decode()
    task.refresh_from_db()
    assert task.title == "Feed the cats"
    assert not change.reverted_by.exists()


def test_unknown_memory_is_404(signed_in):
    assert signed_in.get("/memories/999999/").status_code == 404
    assert signed_in.post("/memories/999999/edit/", {"text": "x"}).status_code == 303
    assert "Memory 999999 does not exist." in signed_in.get("/memories/").content.decode()


def test_superseded_facts_say_what_replaced_them_and_can_be_reinstated(signed_in):
    old = services.memory_create_unchecked(text="Lives in Berlin")
    new = services.memory_create_unchecked(text="Lives in Lisbon")
    services.memory_supersede(memory_id=old.pk, by_id=new.pk, source="owner")

    html = signed_in.get("/memories/", {"show": "superseded"}).content.decode()
    assert "Lives in Berlin" in html and f'href="/memories/{new.pk}/">Lives in Lisbon' in html

    signed_in.post(f"/memories/{old.pk}/reinstate/")
    old.refresh_from_db()
    assert old.superseded_by_id is None


def test_contradictions_are_shown_side_by_side_and_settled(signed_in):
    older = services.memory_create_unchecked(text="Works at Acme")
    newer = services.memory_create_unchecked(text="Works at Globex", conflicts_with_id=older.pk)

    html = signed_in.get("/memories/").content.decode()
    section = html.split("Contradictions waiting to be resolved")[1].split("</section>")[0]
    assert "Works at Acme" in section and "Works at Globex" in section

    signed_in.post(f"/memories/{older.pk}/resolve/", {"other_id": newer.pk, "keep": "this"})

    newer.refresh_from_db()
    assert newer.superseded_by_id == older.pk
    assert "Contradictions waiting" not in signed_in.get("/memories/").content.decode()


def test_keep_both_clears_the_mark(signed_in):
    older = services.memory_create_unchecked(text="Works at Acme")
    newer = services.memory_create_unchecked(text="Works at Globex", conflicts_with_id=older.pk)

    signed_in.post(f"/memories/{newer.pk}/resolve/", {"other_id": older.pk, "keep": "both"})

    newer.refresh_from_db()
    assert newer.conflicts_with_id is None and newer.superseded_by_id is None


def test_settling_a_pair_that_is_not_marked_is_refused(signed_in):
    one = services.memory_create_unchecked(text="Works at Acme")
    two = services.memory_create_unchecked(text="Likes tea")

    response = signed_in.post(
        f"/memories/{one.pk}/resolve/", {"other_id": two.pk, "keep": "this"}, follow=True
    )

    assert "not marked as contradicting" in response.content.decode()
    assert Memory.objects.filter(superseded_by__isnull=False).count() == 0


def test_pages_read_a_fixed_number_of_queries_with_many_memories(
    signed_in, django_assert_max_num_queries
):
    # Keyword recall: with the embedder, each search would also embed (and store) another batch
    # of the 2,000 memories' vectors until all have one; the page's own reads are what is counted.
    owner_settings_update(semantic_enabled=False)
    Memory.objects.bulk_create(
        [Memory(text=f"fact {n}", category=Memory.Category.values[n % 6]) for n in range(2000)]
    )
    kept = Memory.objects.order_by("id")[:40]
    for n, memory in enumerate(kept[:20]):
        Memory.objects.filter(pk=memory.pk).update(conflicts_with=kept[20 + n])
    Memory.objects.filter(pk__in=[m.pk for m in Memory.objects.order_by("-id")[:60]]).update(
        superseded_by=kept[39]
    )
    memory = kept[0]
    for n in range(60):
        services.memory_update_unchecked(memory_id=memory.pk, text=f"fact changed {n}")

    signed_in.get("/memories/")
    # The first search indexes what recall has not seen yet (once, as any recall would).
    signed_in.get("/memories/?q=fact")
    for path in ("/memories/", "/memories/?show=superseded"):
        with django_assert_max_num_queries(7):
            assert signed_in.get(path).status_code == 200
    # A search adds recall's catch-up (a fixed set of reads: what changed since it last looked).
    with django_assert_max_num_queries(14):
        assert signed_in.get("/memories/?q=fact").status_code == 200
    with django_assert_max_num_queries(8):
        assert signed_in.get(f"/memories/{memory.pk}/").status_code == 200
