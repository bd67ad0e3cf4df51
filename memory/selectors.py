"""Reads of memories used by several callers (API, tools, context selection, search)."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Case, Exists, OuterRef, QuerySet, Subquery, When
from django.db.models.functions import Coalesce

from memory import embeddings
from memory.embeddings import Embedder
from memory.models import Memory, MemoryRevision
from memory.recall import engine
from memory.recall.clock import READ_CLOCK, clock_join, clock_of
from memory.recall.engine import Hit, Mode, Recall
from memory.recall.shared import SharedPass
from memory.recall.sources import recall_kinds
from memory.recall.writer import reindex_recent
from talorys.history.models import Change
from talorys.lib.errors import BudgetExhausted, NotFound
from talorys.owner.models import OwnerSettings
from talorys.providers.base import ProviderError

logger = logging.getLogger(__name__)


def memory_get(*, memory_id: int) -> Memory:
    memory = Memory.objects.live().filter(pk=memory_id).first()
    if memory is None:
        raise NotFound(f"Memory {memory_id} does not exist.")
    return memory


def memory_list(
    *, q: str | None = None, superseded: bool = False, by_category: bool = False
) -> QuerySet[Memory]:
    """Current memories (or with ``superseded``, the superseded ones, with what replaced them),
    most recently changed first (``by_category``: within each category, in the order they are
    declared); ``q`` keeps those whose text contains it."""
    memories = Memory.objects.live().filter(superseded_by__isnull=not superseded)
    if superseded:
        memories = memories.select_related("superseded_by")
    if q and q.strip():
        memories = memories.filter(text__icontains=q.strip())
    if by_category:
        order = Case(
            *[When(category=value, then=n) for n, value in enumerate(Memory.Category.values)],
            default=len(Memory.Category.values),
        )
        memories = memories.order_by(order, "-updated_at", "id")
    return memories


def memory_contradictions() -> QuerySet[Memory]:
    """The contradictions waiting for the owner: current memories marked as contradicting
    another current one (``conflicts_with``, read with it), newest first."""
    return (
        current_memories()
        .filter(
            conflicts_with__isnull=False,
            conflicts_with__deleted_at__isnull=True,
            conflicts_with__superseded_by__isnull=True,
        )
        .select_related("conflicts_with")
        .order_by("-created_at", "-id")
    )


def memory_history(*, memory_id: int) -> QuerySet[MemoryRevision]:
    """The memory's revisions, newest first. Raises NotFound for a memory that is gone."""
    memory = memory_get(memory_id=memory_id)
    return memory.revisions.order_by("-created_at", "-id")


# A revision and its change are written in one call (memory/services/memories.py, _record),
# the change first: the one a revision goes with was made at most this long before it.
_PAIR_WINDOW = dt.timedelta(seconds=2)
_CHANGE_ACTION: dict[str, str] = {
    MemoryRevision.Action.SUPERSEDE: Change.Action.UPDATE,
    MemoryRevision.Action.REINSTATE: Change.Action.UPDATE,
}


def memory_revision_changes(
    *, memory_id: int, revisions: Iterable[MemoryRevision]
) -> dict[int, Change]:
    """revision id -> the change recorded with it (``reverted`` annotated: whether a revert was
    made of it), for the revisions that have one: what the history's Revert undoes through
    talorys.history.changes.change_revert. One query for a page of revisions."""
    revisions = list(revisions)
    if not revisions:
        return {}
    changes = list(
        Change.objects.filter(
            kind="memory",
            object_id=memory_id,
            created_at__gte=min(r.created_at for r in revisions) - _PAIR_WINDOW,
            created_at__lte=max(r.created_at for r in revisions),
        )
        .annotate(reverted=Exists(Change.objects.filter(reverts=OuterRef("pk"))))
        .order_by("-created_at", "-id")
    )
    paired: dict[int, Change] = {}
    taken: set[int] = set()
    for revision in sorted(revisions, key=lambda r: (r.created_at, r.pk), reverse=True):
        action = _CHANGE_ACTION.get(revision.action, revision.action)
        for change in changes:
            if (
                change.pk not in taken
                and change.action == action
                and revision.created_at - _PAIR_WINDOW <= change.created_at <= revision.created_at
            ):
                paired[revision.pk] = change
                taken.add(change.pk)
                break
    return paired


# --- recall (memory/recall/) ---------------------------------------------------------------


def recall_items(
    *,
    query: str,
    kinds: list[str] | None = None,
    limit: int = 10,
    mode: Mode | None = None,
    catch_up: bool = True,
    unrelated: bool = False,
) -> list[Hit]:
    """The items that best answer ``query``, best first: memories, tasks, notes, projects,
    automations and conversation messages (``kinds`` narrows them; unknown kinds are a
    ValidationFailed). Hybrid when an embedder is on, keyword otherwise or when it fails.
    Binned and superseded items are never recalled. ``catch_up`` False skips the lazy pass
    (memory/recall/writer.py) for a caller that just made it. ``unrelated``: the nearest even
    below the embedder's floor (memory/recall/engine.py ``rank``)."""
    return engine.recall(
        query=query,
        kinds=kinds,
        limit=limit,
        mode=mode,
        catch_up=catch_up,
        unrelated=unrelated,
    ).hits


def recall_memories(
    *,
    query: str,
    limit: int = 10,
    mode: Mode | None = None,
    catch_up: bool = True,
    unrelated: bool = False,
) -> list[Hit]:
    """``recall_items`` over memories only (``unrelated``: for the conflict check)."""
    return recall_items(
        query=query,
        kinds=["memory"],
        limit=limit,
        mode=mode,
        catch_up=catch_up,
        unrelated=unrelated,
    )


# The page shows the best matches only: recall ranks, it does not page through everything.
PAGE_SEARCH_LIMIT = 50


def memory_search(*, query: str) -> list[Memory]:
    """Current memories matching ``query``, best first (recall's ranking, as in the chat)."""
    ids = [hit.id for hit in recall_memories(query=query, limit=PAGE_SEARCH_LIMIT)]
    found = current_memories().in_bulk(ids)
    return [found[pk] for pk in ids if pk in found]


def recall_search(*, query: str, kinds: list[str] | None = None, limit: int = 10) -> Recall:
    """``recall_items`` with how it ranked them (for /api/search)."""
    return engine.recall(query=query, kinds=kinds, limit=limit)


# --- what a turn's context carries ------------------------------------------------------------

MEMORY_LIMIT = 8
# A hit this weak (a fifth of the query's words, or a middling cosine alone) is not worth a
# line of the prompt; recall's scores are on one scale in every mode (memory/recall/engine.py).
MEMORY_MIN_SCORE = 0.1
RELATED_MIN_SCORE = 0.2


def current_memories() -> QuerySet[Memory]:
    """The memories recall may return: live and not superseded."""
    return Memory.objects.live().filter(superseded_by__isnull=True)


@dataclass(frozen=True)
class RecallPass:
    """What a turn's two recalls share: the embedder (None: keyword), the mode and the index's
    clock after the lazy pass."""

    embedder: Embedder | None
    mode: Mode | None
    state: dict[str, Any] | None


# For a turn that reads the index's clock in a statement it makes anyway (agent/runner/opening.py)
# and passes it to recall_pass: a statement fewer before the first token.
recall_clock_join = clock_join
recall_clock_of = clock_of
_WORDS_PASS = SharedPass()


def recall_pass(
    *, text: str, owner_settings: OwnerSettings, clock: dict[str, Any] | None | object = READ_CLOCK
) -> RecallPass:
    """The lazy pass before a turn's recalls (``turn_memories``, ``turn_related``), without
    messages (the turn's own message needs no index yet, and indexing it would cost a commit:
    the pass after the reply does it) and without vectors; the embedder and the index's clock
    are looked up once for both. The message's vector is made once for both (and cached:
    embeddings.embed_query). The local process's is only started here (if the claim did not
    start it already), so it is made while this pass reads the index's changes, and the recalls
    wait for it (QUERY_BUDGET at most: past it both are keyword recalls). A configured server's
    is waited for here: when it fails both recalls are keyword recalls, rather than each asking
    the server again."""
    embedder = embeddings.active_embedder(owner_settings=owner_settings)
    if isinstance(embedder, embeddings.LocalEmbedder) and text.strip():
        embeddings.query_start(embedder, text.strip())
    elif embedder is not None and text.strip():
        try:
            embeddings.embed_query(embedder, text.strip())
        except (ProviderError, BudgetExhausted) as error:
            logger.warning("Recall: the message's embedding failed, keyword only: %s", error)
            embedder = None
    # Words only before the first token: embedding waiting items here (16 of them, tasks an
    # API client keeps adding) put a hundred milliseconds of CPU in front of every answer. The
    # pass after the reply and the catch-up make their vectors; until then they rank by words.
    # Shared with the turns that need a pass at the same time (memory/recall/shared.py). One that
    # joined another's pass reads the index's state itself: the clock the pass was given was
    # read before this turn asked.
    report = _WORDS_PASS.run(
        lambda: reindex_recent(skip=("message",), embedder=embedder, embed_limit=0, clock=clock)
    )
    state = report.state if report is not None else None
    return RecallPass(
        embedder=embedder, mode=None if embedder is not None else "keyword", state=state
    )


def turn_memories(*, text: str, recall: RecallPass) -> list[str]:
    return memories_for_turn(
        text=text, mode=recall.mode, embedder=recall.embedder, state=recall.state
    )


def turn_related(*, text: str, conversation_id: int, recall: RecallPass) -> list[str]:
    """The related items are optional: a failure to recall them (the index, the embedder)
    leaves them out and never fails the turn (they add context; the reply does not need them)."""
    try:
        return related_items_for_turn(
            text=text,
            conversation_id=conversation_id,
            mode=recall.mode,
            embedder=recall.embedder,
            state=recall.state,
        )
    except Exception:
        logger.exception("Related items for conversation %s left out", conversation_id)
        return []


def memories_for_turn(
    *,
    text: str,
    limit: int = MEMORY_LIMIT,
    mode: Mode | None = None,
    embedder: Embedder | None | object = embeddings.ACTIVE,
    state: dict[str, Any] | None = None,
) -> list[str]:
    """(Call after the index's lazy pass: ``recall_pass``.) The memories the model sees
    with this message: the ones recall ranks best for it (hybrid, or keyword when the embedder
    is off or failing), then the most recently changed, so a few standing facts are always
    there. A memory contradicted by another says so.

    The ranking is read without recall's hits (no snippets needed); the rows read next are the
    liveness check."""
    ranked, _mode, _error = engine.rank(
        text.strip(), kinds=["memory"], top=2 * limit, mode=mode, embedder=embedder, state=state
    )
    ids = [item.object_id for item in ranked if item.score >= MEMORY_MIN_SCORE]
    rows = {m.pk: m for m in _memory_lines().filter(pk__in=ids)}
    ids = [pk for pk in ids if pk in rows][:limit]
    if len(ids) < limit:
        for memory in (
            _memory_lines().exclude(pk__in=ids).order_by("-updated_at", "-id")[: limit - len(ids)]
        ):
            rows[memory.pk] = memory
            ids.append(memory.pk)
    lines = []
    for pk in ids:
        memory = rows[pk]
        line = memory.text
        if memory.valid_from or memory.valid_to:
            line += f" ({_validity(memory)})"
        other = memory.open_conflict  # type: ignore[attr-defined]  # _memory_lines
        if other is not None:
            line += f" [contradicts memory {other}; ask the owner which holds]"
        lines.append(line)
    return lines


# What a memory's line in the prompt reads (the rest of a row is not loaded for it).
_LINE_FIELDS = ("id", "text", "valid_from", "valid_to")


def _memory_lines() -> QuerySet[Memory]:
    """Current memories with what their line reads, and ``open_conflict``: the id of a current
    memory this one contradicts, or that contradicts it (None: none), read in the same
    statement (marks are rare: a partial index holds only them)."""
    current = current_memories()
    return current.only(*_LINE_FIELDS).annotate(
        open_conflict=Coalesce(
            Subquery(current.filter(pk=OuterRef("conflicts_with")).values("pk")[:1]),
            Subquery(current.filter(conflicts_with=OuterRef("pk")).order_by("pk").values("pk")[:1]),
        )
    )


def _validity(memory: Memory) -> str:
    if memory.valid_from and memory.valid_to:
        return f"from {memory.valid_from} to {memory.valid_to}"
    if memory.valid_from:
        return f"since {memory.valid_from}"
    return f"until {memory.valid_to}"


def related_items_for_turn(
    *,
    text: str,
    conversation_id: int | None,
    limit: int = 5,
    mode: Mode | None = None,
    embedder: Embedder | None | object = embeddings.ACTIVE,
    state: dict[str, Any] | None = None,
) -> list[str]:
    """A few of the owner's items related to this message, for the prompt's "related" section:
    tasks, notes, projects, automations and other conversations (this one's messages are in the
    window already). Memories are in their own section."""
    kinds = [kind for kind in recall_kinds() if kind != "memory"]
    hits = [
        hit
        for hit in engine.recall(
            query=text,
            kinds=kinds,
            limit=limit + 5,
            mode=mode,
            catch_up=False,
            embedder=embedder,
            state=state,
        ).hits
        if hit.score >= RELATED_MIN_SCORE
        and not (hit.kind == "message" and hit.conversation_id == conversation_id)
    ][:limit]
    # A hit whose details name another id (a file's passage: its file's) is named by it: the
    # id the model's tools take.
    return [
        f"[{hit.kind} {(hit.details or {}).get('id', hit.id)}] {hit.title}: {hit.snippet}"
        for hit in hits
    ]
