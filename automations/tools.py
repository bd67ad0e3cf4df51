"""Model tools over automations. Registered when the automations app loads.

create/pause/resume are immediate writes; list_automations and list_automation_runs are reads
(so a scheduled run may use them); delete and cancel are destructive and wait for the owner's
approval (prepare -> pending action -> commit), with undo.

The model may not create, change or resume a repeating scheduled prompt (``UnwatchedSpending``,
automations/services/crud.py): create_automation points it at schedule_agent_prompt, a
destructive tool whose approval creates one (undo puts it in the bin), so a hostile note cannot
start one. A one-time prompt, a reminder or a digest stays a direct write.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar
from zoneinfo import ZoneInfo

from django.db.models import QuerySet
from django.utils import timezone
from pydantic import Field

from automations import selectors
from automations.models import Automation, AutomationRun
from automations.schemas import KindField
from automations.services import crud
from talorys.history.tools import SoftDeleteTool
from talorys.lib.errors import Conflict, ValidationFailed
from talorys.lib.schedules import Schedule, describe, next_after, schedule_dump
from talorys.lib.tools import (
    NEW_TARGET,
    ListTool,
    Permission,
    Proposal,
    Tool,
    ToolArgs,
    ToolContext,
    ToolError,
    register,
)
from talorys.web.schemas import Limit
from talorys.workspace.tools import local_iso

AutomationId = Annotated[
    int, Field(ge=1, description="The automation's id, from list_automations.")
]
SNAPSHOT_FIELDS = ("name", "kind", "message", "schedule", "enabled", "cancelled_at")


def _automation(automation: Automation, zone: ZoneInfo) -> dict[str, Any]:
    return {
        "id": automation.pk,
        "name": automation.name,
        "kind": automation.kind,
        "message": automation.message,
        "schedule": selectors.schedule_text(automation, zone),
        "enabled": automation.enabled,
        "cancelled": automation.cancelled_at is not None,
        "next_run_at": local_iso(automation.next_run_at, zone),
        "run_count": automation.run_count,
        "last_status": automation.last_status or None,
        "last_error": automation.last_error or None,
    }


def _run(run: AutomationRun, zone: ZoneInfo) -> dict[str, Any]:
    return {
        "slot": local_iso(run.slot, zone),
        "status": run.status,
        "result": run.result[:300],
        "error": run.error or None,
    }


class CreateAutomationArgs(ToolArgs):
    name: str = Field(
        min_length=1,
        max_length=Automation.NAME_MAX,
        description="A short name, e.g. 'Call Sam' or 'Morning plan'.",
    )
    kind: KindField = Field(
        Automation.Kind.REMINDER,
        description="reminder: show the message at the time. task_digest: a summary of overdue "
        "and due-today tasks. agent_prompt: you run the message as an instruction at the time, "
        "with read tools and notify_owner only.",
    )
    message: str = Field(
        "",
        max_length=Automation.MESSAGE_MAX,
        description="reminder: the text to show. task_digest: an optional heading. "
        "agent_prompt: the instruction, e.g. 'Look at my open tasks and tell me the top three'.",
    )
    schedule: Schedule = Field(
        description="When it runs, in the owner's local time. 'in 2 minutes' or 'tomorrow at 9' "
        "is a once schedule with the exact time and the owner's UTC offset."
    )


@register
class CreateAutomation(Tool):
    name = "create_automation"
    description = (
        "Create a reminder, a task digest or a scheduled prompt that runs once or repeatedly "
        "(daily, weekly on given days, monthly, or a cron expression) in the owner's time zone. "
        "Each run sends the owner a notification."
    )
    args = CreateAutomationArgs
    permission = Permission.WRITE
    cap = 3

    def run(self, args: CreateAutomationArgs, ctx: ToolContext) -> dict[str, Any]:
        try:
            automation = crud.automation_create(
                **dict(args), origin=Automation.Origin.CHAT, actor=ctx.actor
            )
        except crud.UnwatchedSpending:
            raise ToolError(
                "A repeating agent_prompt needs the owner's approval: call "
                "schedule_agent_prompt with the same name, message and schedule instead.",
                code="INVALID_ARGUMENTS",
            ) from None
        return {"automation": _automation(automation, ctx.zone)}


class ListAutomationsArgs(ToolArgs):
    enabled: bool | None = Field(
        None, description="true: only active ones; false: only paused or cancelled; omit for all."
    )
    limit: Limit = 20


@register
class ListAutomations(ListTool):
    name = "list_automations"
    description = (
        "List the owner's automations (reminders, digests, scheduled prompts) soonest first, "
        "with ids, schedules, next run and last outcome."
    )
    args = ListAutomationsArgs
    cap = 4
    key = "automations"

    def rows(self, args: ListAutomationsArgs, ctx: ToolContext) -> QuerySet[Automation]:
        return selectors.automation_list(enabled=args.enabled)

    def item(self, row: Automation, args: ToolArgs, ctx: ToolContext) -> dict[str, Any]:
        return _automation(row, ctx.zone)


class AutomationIdArgs(ToolArgs):
    automation_id: AutomationId


@register
class PauseAutomation(Tool):
    name = "pause_automation"
    description = "Pause an automation: it stops running until resumed."
    args = AutomationIdArgs
    permission = Permission.WRITE
    cap = 5

    def run(self, args: AutomationIdArgs, ctx: ToolContext) -> dict[str, Any]:
        automation = crud.automation_pause(automation_id=args.automation_id, actor=ctx.actor)
        return {"automation": _automation(automation, ctx.zone)}


@register
class ResumeAutomation(Tool):
    name = "resume_automation"
    description = (
        "Resume a paused automation from now on (times that passed while paused are not run). "
        "A repeating scheduled prompt only the owner can resume."
    )
    args = AutomationIdArgs
    permission = Permission.WRITE
    cap = 5

    def run(self, args: AutomationIdArgs, ctx: ToolContext) -> dict[str, Any]:
        try:
            automation = crud.automation_resume(automation_id=args.automation_id, actor=ctx.actor)
        except crud.UnwatchedSpending:
            raise ToolError(
                "Only the owner can resume a repeating scheduled prompt (it spends their model "
                "budget at every run): tell them to resume it on the Automations page.",
                code="NEEDS_OWNER",
            ) from None
        return {"automation": _automation(automation, ctx.zone)}


class ListAutomationRunsArgs(ToolArgs):
    automation_id: AutomationId
    limit: Limit = 10


@register
class ListAutomationRuns(ListTool):
    name = "list_automation_runs"
    description = "The latest runs of one automation, newest first: when, outcome, result or error."
    args = ListAutomationRunsArgs
    cap = 4
    key = "runs"

    def rows(self, args: ListAutomationRunsArgs, ctx: ToolContext) -> QuerySet[AutomationRun]:
        return selectors.automation_run_list(automation_id=args.automation_id)

    def item(self, row: AutomationRun, args: ToolArgs, ctx: ToolContext) -> dict[str, Any]:
        return _run(row, ctx.zone)


# --- destructive: wait for the owner's approval ------------------------------------------------


class _AutomationApprovalTool(SoftDeleteTool):
    model = Automation
    id_arg = "automation_id"
    label = "automation"
    snapshot_fields = SNAPSHOT_FIELDS
    args = AutomationIdArgs
    verb: ClassVar[str]

    def summary(self, obj: Automation) -> str:
        return f"{self.verb} the automation “{obj.name}” ({selectors.schedule_text(obj)})"


@register
class DeleteAutomation(_AutomationApprovalTool):
    name = "delete_automation"
    description = (
        "Delete an automation (after the owner approves; restorable for 30 days). Until then "
        "nothing changes: do not say it is deleted."
    )
    verb = "Delete"

    def commit(self, proposal: Proposal, ctx: ToolContext) -> dict[str, Any]:
        automation = crud.automation_delete(automation_id=proposal.target_id, actor=ctx.actor)
        assert automation.deleted_at is not None  # just set by automation_delete
        return {"undoable": True, "deleted_at": automation.deleted_at.isoformat()}

    def undo(self, proposal: Proposal, result: dict[str, Any]) -> dict[str, Any]:
        crud.automation_restore(automation_id=proposal.target_id)
        return {"restored": True}


@register
class CancelAutomation(_AutomationApprovalTool):
    name = "cancel_automation"
    description = (
        "Cancel an automation for good: it never runs again (after the owner approves). To stop "
        "it for a while, use pause_automation instead."
    )
    verb = "Cancel"

    def prepare(self, args: AutomationIdArgs, ctx: ToolContext) -> Proposal:
        proposal = super().prepare(args, ctx)
        if self._live(args.automation_id).cancelled_at is not None:
            raise Conflict("That automation is already cancelled.")
        return proposal

    def commit(self, proposal: Proposal, ctx: ToolContext) -> dict[str, Any]:
        automation = crud.automation_cancel(automation_id=proposal.target_id)
        assert automation.cancelled_at is not None  # just set by automation_cancel
        return {"undoable": True, "cancelled_at": automation.cancelled_at.isoformat()}

    def undo(self, proposal: Proposal, result: dict[str, Any]) -> dict[str, Any]:
        crud.automation_uncancel(automation_id=proposal.target_id)
        return {"restored": True, "enabled": False}


class ScheduleAgentPromptArgs(ToolArgs):
    name: str = Field(
        min_length=1,
        max_length=Automation.NAME_MAX,
        description="A short name, e.g. 'Morning plan'.",
    )
    message: str = Field(
        min_length=1,
        max_length=Automation.MESSAGE_MAX,
        description="The instruction you will run at each time, e.g. 'Look at my open tasks "
        "and tell me the top three'.",
    )
    schedule: Schedule = Field(description="When it runs, in the owner's local time.")


@register
class ScheduleAgentPrompt(Tool):
    name = "schedule_agent_prompt"
    description = (
        "Propose a scheduled prompt that runs repeatedly (daily, weekly, monthly or cron): at "
        "each time you run the message as an instruction, with read tools and notify_owner "
        "only, spending the owner's model budget. It exists only after the owner approves; "
        "until then do not say it is scheduled."
    )
    args = ScheduleAgentPromptArgs
    permission = Permission.DESTRUCTIVE
    cap = 2
    NEW = "new"  # nothing exists yet that could change under the proposal

    def prepare(self, args: ScheduleAgentPromptArgs, ctx: ToolContext) -> Proposal:
        # Checked now, so the owner is never asked to approve what could not be created.
        if next_after(args.schedule, timezone.now(), ctx.zone) is None:
            raise ValidationFailed("schedule.at: that time has passed; give a time in the future.")
        return Proposal(
            target_id=NEW_TARGET,
            snapshot=self.NEW,
            summary=f"Schedule the prompt “{args.name}” to run {describe(args.schedule, ctx.zone)}",
            payload={
                "name": args.name,
                "message": args.message,
                "schedule": schedule_dump(args.schedule),
            },
            preview=args.message,
        )

    def snapshot(self, target_id: int) -> str | None:
        return self.NEW

    def commit(self, proposal: Proposal, ctx: ToolContext) -> dict[str, Any]:
        automation = crud.automation_create(
            kind=Automation.Kind.AGENT_PROMPT, origin=Automation.Origin.CHAT, **proposal.payload
        )
        return {"undoable": True, "automation_id": automation.pk}

    def undo(self, proposal: Proposal, result: dict[str, Any]) -> dict[str, Any]:
        crud.automation_delete(automation_id=result["automation_id"])
        return {"deleted": True}
