"""Input and output schemas of the automations API. Inputs are never reused as outputs."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from ninja import Schema
from pydantic import Field

from automations import selectors
from automations.models import Automation
from talorys.lib.schedules import Schedule
from talorys.owner.selectors import owner_zone
from talorys.web.schemas import NOT_NULL, In, one_of

KindField = Annotated[Automation.Kind, one_of(Automation.Kind)]


class AutomationIn(In):
    name: str = Field(min_length=1, max_length=Automation.NAME_MAX)
    kind: KindField
    message: str = Field("", max_length=Automation.MESSAGE_MAX)
    schedule: Schedule
    enabled: bool = True


class AutomationPatch(In):
    """Send only what changes. Pausing and resuming have their own endpoints."""

    # A name or schedule left out keeps it; null is refused (the schema has no null).
    name: Annotated[str | None, NOT_NULL] = Field(
        None, min_length=1, max_length=Automation.NAME_MAX
    )
    message: str | None = Field(None, max_length=Automation.MESSAGE_MAX)
    schedule: Annotated[Schedule | None, NOT_NULL] = None


class AutomationFilters(Schema):
    enabled: bool | None = None
    kind: KindField | None = None


class AutomationOut(Schema):
    id: int
    name: str
    kind: str
    message: str
    schedule: dict[str, Any]
    schedule_text: str
    enabled: bool
    origin: str
    next_run_at: dt.datetime | None
    run_count: int
    last_run_at: dt.datetime | None
    last_status: str
    last_result: str
    last_error: str
    cancelled_at: dt.datetime | None
    created_at: dt.datetime
    updated_at: dt.datetime

    @staticmethod
    def resolve_schedule_text(obj: Automation, context: dict[str, Any] | None = None) -> str:
        # The owner's zone is read once per response, not once per row: kept on the request.
        request = (context or {}).get("request")
        zone = getattr(request, "talorys_owner_zone", None)
        if zone is None:
            zone = owner_zone()
            if request is not None:
                request.talorys_owner_zone = zone
        return selectors.schedule_text(obj, zone)


class AutomationRunOut(Schema):
    id: int
    slot: dt.datetime
    status: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    result: str
    error: str
    usage: dict[str, Any]
    notification_id: int | None
    conversation_id: int | None = Field(
        description="A scheduled prompt's answered run: the conversation with its prompt and "
        "answer (/c/{id}/), which the owner continues like any chat; null otherwise."
    )
