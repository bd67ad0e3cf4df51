"""The first model step's heartbeat as a read: what the turn needs of its conversation's row and
of the settings' version comes back with the check itself, one statement instead of three."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Subquery
from django.db.models.functions import Coalesce

from agent.models import Conversation
from talorys.owner.models import OwnerSettings


@dataclass(frozen=True)
class Opening:
    summary: str
    # None: no settings row yet (talorys.owner.services.settings.owner_settings_current).
    settings_version: int | None


def opening_read(*, conversation_id: int, turn_id: str) -> Opening | None:
    """services.turn_heartbeat's check, without renewing (the claim set the lease a moment
    ago), with the running summary and the settings' version; None when the turn must stop."""
    row = (
        Conversation.objects.filter(
            pk=conversation_id, turn_id=turn_id, turn_cancel_requested=False
        )
        .annotate(version=Subquery(OwnerSettings.objects.filter(pk=1).values("version")[:1]))
        .values_list("summary", "version")
        .first()
    )
    return None if row is None else Opening(summary=row[0], settings_version=row[1])


def summary_upto(conversation_id: int) -> Coalesce:
    """The id the running summary covers messages up to (0: none), as a subquery: the history is
    read beside the opening read, which brings the summary, and this turn alone writes both."""
    return Coalesce(
        Subquery(Conversation.objects.filter(pk=conversation_id).values("summary_upto")[:1]), 0
    )
