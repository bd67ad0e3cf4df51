"""The first model step's heartbeat as a read: what the turn needs of its conversation's row, the
settings' version and the recall index's clock come back with the check itself, one statement
instead of four."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Subquery
from django.db.models.functions import Coalesce

from agent.models import Conversation
from memory import selectors as memory_selectors
from talorys.owner.models import OwnerSettings


@dataclass(frozen=True)
class Opening:
    summary: str
    # None: no settings row yet (talorys.owner.services.settings.owner_settings_current).
    settings_version: int | None
    # The recall index's clock, for recall's lazy pass (None: no index yet).
    index_clock: dict[str, Any] | None


def opening_read(*, conversation_id: int, turn_id: str) -> Opening | None:
    """services.turn_heartbeat's check, without renewing (the claim set the lease a moment
    ago), with the running summary and the settings' version; None when the turn must stop."""
    row = (
        Conversation.objects.filter(
            pk=conversation_id, turn_id=turn_id, turn_cancel_requested=False
        )
        .annotate(
            settings_version=Subquery(OwnerSettings.objects.filter(pk=1).values("version")[:1]),
            **memory_selectors.recall_clock_subqueries(_CLOCK),
        )
        .values("summary", "settings_version", *_CLOCK_NAMES)
        .first()
    )
    if row is None:
        return None
    return Opening(
        summary=row["summary"],
        settings_version=row["settings_version"],
        index_clock=memory_selectors.recall_clock_of(row, _CLOCK),
    )


_CLOCK = "index_"
_CLOCK_NAMES = tuple(memory_selectors.recall_clock_subqueries(_CLOCK))


def summary_upto(conversation_id: int) -> Coalesce:
    """The id the running summary covers messages up to (0: none), as a subquery: the history is
    read beside the opening read, which brings the summary, and this turn alone writes both."""
    return Coalesce(
        Subquery(Conversation.objects.filter(pk=conversation_id).values("summary_upto")[:1]), 0
    )
