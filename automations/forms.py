"""The schedule form: the fields a person fills in (once, daily, weekly, monthly, cron, in the
owner's time zone), turned into the schedule spec the API and the services take.

The form only gathers the fields each kind needs and says which are missing; whether a schedule
is valid is talorys/lib/schedules.py's to say (``schedule_parse``), and whether it can be armed
(a ``once`` in the past) the services'. Their messages name the spec's field
("schedule.days: ..."); ``place_error`` puts each next to the field the owner filled in, in
the page's words (talorys/lib/wording.py: "Day of the month must be 1 or more.").
The owner's pages (automations/views.py) and the admin (automations/admin.py) share it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from django import forms

from automations.models import Automation
from talorys.lib.errors import ValidationFailed
from talorys.lib.schedules import WEEKDAYS, Once, schedule_dump, schedule_parse
from talorys.lib.wording import plain_parts
from talorys.owner.selectors import owner_zone

SCHEDULE_TYPES = [
    ("once", "Once"),
    ("daily", "Every day"),
    ("weekly", "Every week"),
    ("monthly", "Every month"),
    ("cron", "Cron expression"),
]
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
KIND_LABELS: dict[str, str] = {
    Automation.Kind.REMINDER: "Reminder: a notification with your text",
    Automation.Kind.AGENT_PROMPT: "Prompt: the assistant runs it and tells you",
    Automation.Kind.TASK_DIGEST: "Task digest: your open tasks",
}

# The fields each kind of schedule reads, and what to say when one is left empty.
NEEDS = {
    "once": ("schedule_date", "schedule_time"),
    "daily": ("schedule_time",),
    "weekly": ("schedule_days", "schedule_time"),
    "monthly": ("schedule_day", "schedule_time"),
    "cron": ("schedule_cron",),
}
MISSING = {
    "schedule_date": "Pick a date.",
    "schedule_time": "Give a time, e.g. 08:30.",
    "schedule_days": "Pick at least one day of the week.",
    "schedule_day": "Give a day of the month (1-31).",
    "schedule_cron": "Give a cron expression, e.g. 0 9 * * 1-5.",
}
SCHEDULE_FIELDS = ("schedule_type", *MISSING)
# The spec's field named in a message from schedules.py or the services → the form's field.
FIELD_OF = {
    "": "schedule_type",
    "type": "schedule_type",
    "at": "schedule_date",
    "time": "schedule_time",
    "days": "schedule_days",
    "day": "schedule_day",
    "expression": "schedule_cron",
}


def schedule_initial(schedule: dict[str, Any], zone: ZoneInfo) -> dict[str, Any]:
    """The form's fields for a stored schedule (nothing for one that no longer parses)."""
    try:
        parsed = schedule_parse(schedule)
    except ValidationFailed:
        return {}
    if not isinstance(parsed, Once):
        return {FIELD_OF[key]: value for key, value in schedule_dump(parsed).items()}
    try:
        local = parsed.at.astimezone(zone)
    except OverflowError:  # only a row written before dates were bounded
        return {"schedule_type": "once"}
    return {"schedule_type": "once", "schedule_date": local.date(), "schedule_time": local.time()}


class ScheduleForm(forms.Form):
    """The schedule's fields; ``cleaned_data["schedule"]`` is the validated spec."""

    schedule_type = forms.ChoiceField(
        label="Repeats",
        choices=SCHEDULE_TYPES,
        initial="daily",
        error_messages={"required": "Choose how often it runs."},
    )
    schedule_date = forms.DateField(
        label="Date", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    schedule_time = forms.TimeField(
        label="Time",
        required=False,
        initial="09:00",
        widget=forms.TimeInput(attrs={"type": "time"}, format="%H:%M"),
    )
    schedule_days = forms.MultipleChoiceField(
        label="Days of the week",
        required=False,
        choices=list(zip(WEEKDAYS, WEEKDAY_NAMES, strict=True)),
        widget=forms.CheckboxSelectMultiple,
    )
    # No bounds here: the range of days is schedules.py's rule, and its message says it.
    schedule_day = forms.IntegerField(
        label="Day of the month",
        required=False,
        help_text="29, 30 or 31 mean the last day in shorter months.",
    )
    schedule_cron = forms.CharField(
        label="Cron expression",
        required=False,
        help_text="minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5",
    )

    def __init__(self, *args: Any, zone: ZoneInfo | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.zone = zone or owner_zone()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or self.cleaned_data
        kind = cleaned.get("schedule_type")
        if kind not in NEEDS:
            return cleaned
        for name in NEEDS[kind]:
            if name not in self.errors and cleaned.get(name) in (None, "", []):
                self.add_error(name, MISSING[name])
        if any(name in self.errors for name in NEEDS[kind]):
            return cleaned
        try:
            cleaned["schedule"] = schedule_dump(schedule_parse(self._spec(kind, cleaned)))
        except ValidationFailed as exc:
            self.place_error(exc.message)
        return cleaned

    def _spec(self, kind: str, cleaned: dict[str, Any]) -> dict[str, Any]:
        if kind == "once":
            # The wall-clock time in the owner's zone with its offset; fold=0 is the rule of
            # schedules.wall_to_instant (a repeated time is its first occurrence).
            at = dt.datetime.combine(cleaned["schedule_date"], cleaned["schedule_time"], self.zone)
            return {"type": "once", "at": at.isoformat()}
        # The spec's fields the kind needs, named back from the form's (FIELD_OF).
        spec = {key: cleaned[name] for key, name in FIELD_OF.items() if name in NEEDS[kind]}
        if "time" in spec:
            spec["time"] = spec["time"].strftime("%H:%M")
        return {"type": kind, **spec}

    def place_error(self, message: str) -> None:
        """Show a message of the schedules or a service next to the field it is about."""
        labels = {name: str(field.label) for name, field in self.fields.items()}
        for spec_key, form_name in FIELD_OF.items():
            labels[f"schedule.{spec_key}" if spec_key else "schedule"] = labels[form_name]
        for part in plain_parts(message, labels):
            self.add_error(self._field_of(part.field), part.text)

    def _field_of(self, name: str | None) -> str | None:
        """The form's field a message names ("schedule.day", "name"), None for the form."""
        if name is None:
            return None
        if name == "schedule" or name.startswith("schedule."):
            return FIELD_OF.get(name.removeprefix("schedule").removeprefix("."))
        return name if name in self.fields else None

    def schedule_rows(self) -> list[dict[str, Any]]:
        """The schedule's fields after the kind, each with the kinds that read it and whether
        the chosen kind does (the page shows only those; automations.js follows a change)."""
        kind = self["schedule_type"].value()
        rows = []
        for name in MISSING:
            kinds = [k for k, names in NEEDS.items() if name in names]
            rows.append({"field": self[name], "needs": " ".join(kinds), "shown": kind in kinds})
        return rows


class AutomationForm(ScheduleForm):
    """The owner's page form: what the automation does, and when."""

    name = forms.CharField(
        label="Name",
        max_length=Automation.NAME_MAX,
        error_messages={"required": "Give it a name, e.g. Water the plants."},
    )
    kind = forms.ChoiceField(
        label="What it does",
        choices=list(KIND_LABELS.items()),
        widget=forms.RadioSelect,
        error_messages={"required": "Choose what it does: a reminder, a prompt or a task digest."},
    )
    message = forms.CharField(
        label="Text or prompt",
        required=False,
        max_length=Automation.MESSAGE_MAX,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="A reminder's text, the prompt the assistant runs, or a digest's heading.",
    )
    field_order = ["name", "kind", "message", *SCHEDULE_FIELDS]

    def __init__(self, *args: Any, automation: Automation | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.automation = automation
        if automation is not None:
            fields = {key: getattr(automation, key) for key in ("name", "kind", "message")}
            self.initial.update(fields, **schedule_initial(automation.schedule, self.zone))
            # What an automation does is fixed once made (automation_update keeps its kind).
            self.fields["kind"].disabled = True

    def create_arguments(self) -> dict[str, Any]:
        """automation_create's arguments. Call after is_valid()."""
        return {key: self.cleaned_data[key] for key in ("name", "kind", "message", "schedule")}

    def changes(self) -> dict[str, Any]:
        """What automation_update should change: only what differs, so that renaming keeps the
        queued run (a new schedule voids it and re-arms). Call after is_valid()."""
        assert self.automation is not None
        current = self.automation
        changes = {
            key: self.cleaned_data[key]
            for key in ("name", "message")
            if self.cleaned_data[key] != getattr(current, key)
        }
        if schedule_changed(current.schedule, self.cleaned_data["schedule"]):
            changes["schedule"] = self.cleaned_data["schedule"]
        return changes


def schedule_changed(stored: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether ``new`` is another schedule than ``stored`` (the same instant written with
    another offset is the same ``once``)."""
    try:
        return schedule_parse(stored) != schedule_parse(new)
    except ValidationFailed:  # a stored schedule that no longer parses: anything is a change
        return True


class AutomationAdminForm(ScheduleForm, forms.ModelForm):
    """The admin's form: the schedule's fields instead of the raw JSON (automations/admin.py).

    ``changed_data`` names ``schedule`` (not its fields) when the schedule is another one, so the
    admin hands automation_update exactly what the owner's edit page would."""

    class Meta:
        model = Automation
        fields = ["name", "kind", "message", "enabled"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.initial.update(schedule_initial(self.instance.schedule, self.zone))

    @property
    def changed_data(self) -> list[str]:
        changed = [name for name in super().changed_data if name not in SCHEDULE_FIELDS]
        new = self.cleaned_data.get("schedule")
        if new is not None and (
            self.instance.pk is None or schedule_changed(self.instance.schedule, new)
        ):
            changed.append("schedule")
        return changed
