"""One recall engine for everything: every kind, BM25 quality
with no model, hybrid with an embedder, keyword when it fails, nothing binned or superseded."""

from __future__ import annotations

import pytest

from agent.models import Conversation, Message
from memory import selectors
from memory import services as memory_services
from memory.models import RecallEntry
from memory.recall.index import RecallIndex
from talorys.history.bin import bin_restore
from talorys.history.kinds import item_kind
from talorys.lib.actors import OWNER
from talorys.lib.errors import ValidationFailed
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services
from tests.agent.fake_openai import error
from tests.memory.conftest import one_of_each, use_fake_embeddings

pytestmark = pytest.mark.django_db


def kinds_and_ids(hits) -> list[tuple[str, int]]:
    return [(hit.kind, hit.id) for hit in hits]


def test_recall_items_finds_every_kind_with_a_snippet_and_a_score():
    items = one_of_each("Skopelos")

    hits = selectors.recall_items(query="skopelos", limit=10)

    assert sorted(kinds_and_ids(hits)) == sorted((kind, item.pk) for kind, item in items.items())
    assert all(hit.score > 0 and "Skopelos" in hit.snippet for hit in hits)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    message = next(hit for hit in hits if hit.kind == "message")
    assert message.conversation_id == items["message"].conversation_id


def test_kinds_narrow_recall_and_an_unknown_kind_is_a_clear_error():
    items = one_of_each("Skopelos")

    hits = selectors.recall_items(query="skopelos", kinds=["task", "note"])

    assert sorted(kinds_and_ids(hits)) == sorted(
        [("task", items["task"].pk), ("note", items["note"].pk)]
    )
    with pytest.raises(ValidationFailed, match="Unknown kinds: pets"):
        selectors.recall_items(query="skopelos", kinds=["task", "pets"])


def test_keyword_ranking_stems_folds_accents_and_weighs_rare_words():
    moved = memory_services.memory_create_unchecked(text="Moved to São Paulo for the new job")
    common = [
        memory_services.memory_create_unchecked(text=f"Paid the job invoice {n}") for n in range(8)
    ]

    # Another form of the word ("moving"), without the accent, finds it first.
    assert kinds_and_ids(selectors.recall_memories(query="moving to sao paulo"))[0] == (
        "memory",
        moved.pk,
    )
    # "job" is in nine memories, "paulo" in one: the rare word decides (inverse document frequency).
    assert selectors.recall_memories(query="job paulo")[0].id == moved.pk
    assert len(selectors.recall_memories(query="job", limit=20)) == len(common) + 1


@pytest.mark.usefixtures("keyword_recall")
def test_an_exact_rare_name_or_number_is_found_among_many():
    for n in range(60):
        memory_services.memory_create_unchecked(text=f"Dentist appointment number {n} went fine")
    target = memory_services.memory_create_unchecked(text="Dr. Okonkwo's clinic extension is 4471")

    assert selectors.recall_memories(query="Okonkwo")[0].id == target.pk
    assert selectors.recall_memories(query="what is extension 4471?")[0].id == target.pk
    assert selectors.recall_memories(query="447") == []  # a number matches whole, not a prefix


def test_binned_and_superseded_items_are_never_recalled_and_a_restored_one_comes_back():
    items = one_of_each("Skopelos")
    newer = memory_services.memory_create_unchecked(text="Sister Ana lives near Skopelos town")
    memory_services.memory_supersede(memory_id=items["memory"].pk, by_id=newer.pk, source="owner")
    for kind, item in items.items():
        if kind not in ("memory", "message"):
            item_kind(kind.removesuffix("s")).delete(pk=item.pk, actor=OWNER)
    conversation = items["message"].conversation
    item_kind("conversation").delete(pk=conversation.pk, actor=OWNER)

    assert kinds_and_ids(selectors.recall_items(query="skopelos")) == [("memory", newer.pk)]

    bin_restore(kind="task", pk=items["task"].pk)
    assert ("task", items["task"].pk) in kinds_and_ids(selectors.recall_items(query="skopelos"))


def test_a_hit_binned_behind_the_indexs_back_is_still_not_returned():
    task = services.task_create(title="Renew the Skopelos lease")
    assert selectors.recall_items(query="skopelos")
    # Gone without the change log knowing (as a raw update would): the entry is still live.
    type(task).objects.filter(pk=task.pk).update(deleted_at=task.created_at)

    assert selectors.recall_items(query="skopelos") == []


def test_a_change_reindexes_the_item_and_a_delete_removes_its_entry():
    note = services.note_create(title="Ferries", content="Leave from Piraeus")
    assert selectors.recall_items(query="piraeus")[0].id == note.pk

    services.note_update(note_id=note.pk, content="Leave from Rafina")

    assert selectors.recall_items(query="piraeus") == []
    assert selectors.recall_items(query="rafina")[0].id == note.pk
    services.note_delete(note_id=note.pk)
    selectors.recall_items(query="rafina")
    entry = RecallEntry.objects.get(kind="note", object_id=note.pk)
    assert entry.live is False and entry.text == ""


def test_new_messages_of_a_conversation_are_recalled_and_streaming_replies_are_not():
    conversation = Conversation.objects.create(title="Pets")
    Message.objects.create(conversation=conversation, role="user", content="Our cat is Miso")
    reply = Message.objects.create(
        conversation=conversation,
        role="assistant",
        content="Miso is a lovely",
        status=Message.Status.STREAMING,
    )

    assert [hit.kind for hit in selectors.recall_items(query="miso")] == ["message"]

    Message.objects.filter(pk=reply.pk).update(
        content="Miso is a lovely name.", status=Message.Status.COMPLETE
    )
    assert len(selectors.recall_items(query="miso")) == 2


def test_another_processs_writes_reach_this_processs_index_by_seq():
    """Two in-memory indexes over one table: each sees the other's writes, and a new
    generation (a fresh database) makes a copy reload rather than keep stale slots."""
    other = RecallIndex()
    services.task_create(title="Water the Skopelos garden")
    selectors.recall_items(query="garden")  # this process indexes it

    with other.lock:
        other.sync(vector_model="")
        assert [r.kind for r in other.keyword(["garden"], kinds=None, top=5)] == ["task"]

    memory_services.reindex(full=True)
    RecallEntry.objects.all().delete()
    from memory.models import IndexState

    IndexState.objects.update(generation="another-database")
    with other.lock:
        other.sync(vector_model="")
        assert other.keyword(["garden"], kinds=None, top=5) == []


def test_empty_or_blank_queries_find_nothing():
    one_of_each("Skopelos")

    assert selectors.recall_items(query="   ") == []
    assert selectors.recall_items(query="the and of") == []


# --- with an embedder ----------------------------------------------------------------------


def test_hybrid_finds_a_paraphrase_that_keywords_miss_and_keeps_the_exact_name(local_embeddings):
    cello = memory_services.memory_create_unchecked(text="My daughter started learning the cello")
    okonkwo = memory_services.memory_create_unchecked(
        text="Dr. Okonkwo moved his clinic to Hill Street"
    )
    for text in ("Buy oat milk", "The boiler was serviced in May", "Book flights to Lyon"):
        memory_services.memory_create_unchecked(text=text)

    question = "Which instrument does my kid play?"
    assert selectors.recall_memories(query=question, mode="keyword") == []
    assert selectors.recall_memories(query=question)[0].id == cello.pk
    assert selectors.recall_memories(query="okonkwo")[0].id == okonkwo.pk
    entry = RecallEntry.objects.get(kind="memory", object_id=cello.pk)
    assert (
        entry.vector_model == "local:all-MiniLM-L6-v2-onnx-int8:sentences"
        and entry.vector_dim == 384
    )


def test_with_an_embeddings_server_recall_is_hybrid_and_vectors_follow_content(fake_openai):
    use_fake_embeddings(fake_openai)
    note = services.note_create(title="Ferries", content="Leave from Piraeus")

    found = selectors.recall_search(query="ferries piraeus")

    assert found.mode == "hybrid" and found.hits[0].id == note.pk
    embedded = [text for body in fake_openai.embedding_requests for text in body["input"]]
    assert "Ferries\nLeave from Piraeus" in embedded and "ferries piraeus" in embedded
    entry = RecallEntry.objects.get(kind="note", object_id=note.pk)
    assert entry.vector_dim == 16 and entry.vector_hash == entry.content_hash

    services.note_update(note_id=note.pk, content="Leave from Rafina")
    selectors.recall_items(query="rafina")

    entry.refresh_from_db()
    assert entry.vector_hash == entry.content_hash
    assert any(
        "Ferries\nLeave from Rafina" in body["input"] for body in fake_openai.embedding_requests
    )


def test_a_new_embeddings_model_re_embeds_every_vector(fake_openai):
    use_fake_embeddings(fake_openai)
    one_of_each("Skopelos")
    memory_services.reindex()
    assert set(RecallEntry.objects.values_list("vector_model", flat=True)) == {
        f"fake-embed @ {fake_openai.base_url}"
    }

    owner_settings_update(embeddings_model="fake-embed-v2")
    report = memory_services.reindex()

    assert report.embedded == RecallEntry.objects.filter(live=True).count() == 6
    assert set(RecallEntry.objects.values_list("vector_model", flat=True)) == {
        f"fake-embed-v2 @ {fake_openai.base_url}"
    }


def test_when_the_embedder_fails_recall_falls_back_to_keywords(fake_openai):
    use_fake_embeddings(fake_openai)
    task = services.task_create(title="Book the Skopelos ferry")
    memory_services.reindex()
    fake_openai.script_embeddings(error(503, "overloaded"))

    found = selectors.recall_search(query="skopelos ferry")

    assert found.mode == "keyword" and "503" in found.error
    assert [hit.id for hit in found.hits] == [task.pk]
    # Left alone for a while: the next recalls send nothing and say why.
    sent = len(fake_openai.embedding_requests)
    again = selectors.recall_search(query="the skopelos ferry times")
    assert again.mode == "keyword" and "trying again in" in again.error
    assert len(fake_openai.embedding_requests) == sent


def test_an_exhausted_embedding_budget_falls_back_to_keywords_without_a_request(fake_openai):
    use_fake_embeddings(fake_openai)
    task = services.task_create(title="Book the Skopelos ferry")
    memory_services.reindex()
    owner_settings_update(daily_embedding_requests=0)
    sent = len(fake_openai.embedding_requests)

    found = selectors.recall_search(query="skopelos ferries")

    assert found.mode == "keyword" and "budget" in found.error
    assert [hit.id for hit in found.hits] == [task.pk]
    assert len(fake_openai.embedding_requests) == sent


def test_the_lazy_pass_embeds_a_capped_number_and_the_catch_up_the_rest(fake_openai):
    from memory.recall.writer import RECENT_EMBED_LIMIT

    memory_services.reindex()  # the first pass ran before semantic recall was on
    for n in range(RECENT_EMBED_LIMIT + 10):
        services.task_create(title=f"Errand {n}")
    use_fake_embeddings(fake_openai)

    selectors.recall_items(query="errand")
    assert RecallEntry.objects.exclude(vector=None).count() == RECENT_EMBED_LIMIT

    memory_services.reindex()
    assert RecallEntry.objects.filter(vector=None).count() == 0


def test_each_searchable_kind_has_the_name_the_bin_and_the_change_log_use():
    """One name per kind: recall's sources, its hits and the catch-up's read of the change log
    all say "memory", "task"...; a source whose changes are in the change log is a kind there."""
    from memory.recall.sources import sources
    from talorys.history.kinds import kind_names

    logged = {source.kind for source in sources() if source.logged}

    assert logged == {"memory", "task", "note", "project", "automation"}
    assert logged <= set(kind_names())
