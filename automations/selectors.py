"""Reads of automations used by several callers (API, tools, pages)."""

from __future__ import annotations

from django.db.models import QuerySet

from automations.models import Automation, AutomationRun
from talorys.lib.errors import NotFound


def automation_get(*, automation_id: int) -> Automation:
    automation = Automation.objects.live().filter(pk=automation_id).first()
    if automation is None:
        raise NotFound(f"Automation {automation_id} does not exist.")
    return automation


def automation_list(
    *, enabled: bool | None = None, kind: str | None = None
) -> QuerySet[Automation]:
    automations = Automation.objects.live()
    if enabled is not None:
        automations = automations.filter(enabled=enabled)
    if kind:
        automations = automations.filter(kind=kind)
    return automations


def automation_run_list(*, automation_id: int) -> QuerySet[AutomationRun]:
    """The automation's receipts, newest slot first (NotFound when the automation is gone)."""
    automation = automation_get(automation_id=automation_id)
    return AutomationRun.objects.filter(automation=automation)
