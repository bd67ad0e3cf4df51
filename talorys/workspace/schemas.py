"""Input and output schemas of the core API. Inputs are never reused as outputs."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from ninja import Schema
from pydantic import Field

from talorys.lib.schedules import Repeat
from talorys.lib.search import QUERY_MAX
from talorys.web.schemas import (
    NOT_NULL,
    BoundedDatetime,
    ExpectedVersion,
    Id,
    In,
    QueryText,
    one_of,
)
from talorys.workspace.models import Note, Project, Task
from talorys.workspace.selectors import TaskDue

# The limits and choices are the models': these read them, never restate them.
TaskStatus = Annotated[Task.Status, one_of(Task.Status)]
REPEAT_HELP = (
    "Repeat the task: a daily, weekly, monthly or cron schedule in the owner's time zone, e.g. "
    '{"type": "weekly", "days": ["mon"], "time": "08:00"}. Completing a repeating task keeps it '
    "open and moves due_at to the next occurrence after the later of its due date and now; "
    "without a due date it is due at the first occurrence from now."
)


class ProjectRef(Schema):
    id: int
    name: str


class TaskIn(In):
    title: str = Field(min_length=1, max_length=Task.TITLE_MAX)
    details: str = Field("", max_length=Task.DETAILS_MAX)
    priority: int = Field(Task.Priority.NORMAL, ge=Task.Priority.LOW, le=Task.Priority.HIGH)
    due_at: BoundedDatetime | None = None
    project_id: Id | None = None
    repeat: Repeat | None = Field(None, description=REPEAT_HELP)


class TaskPatch(In):
    # A title, status or priority left out keeps it; null is refused (the schema has no null).
    # null clears the details, the due date and the project, and stops a repeat.
    title: Annotated[str | None, NOT_NULL] = Field(None, min_length=1, max_length=Task.TITLE_MAX)
    details: str | None = Field(None, max_length=Task.DETAILS_MAX)
    status: Annotated[TaskStatus | None, NOT_NULL] = None
    priority: Annotated[int | None, NOT_NULL] = Field(
        None, ge=Task.Priority.LOW, le=Task.Priority.HIGH
    )
    due_at: BoundedDatetime | None = None
    project_id: Id | None = None
    repeat: Repeat | None = Field(None, description=REPEAT_HELP + " null stops repeating.")
    version: ExpectedVersion = None


class TaskOut(Schema):
    id: int
    title: str
    details: str
    status: str
    priority: int
    due_at: dt.datetime | None
    project: ProjectRef | None
    completed_at: dt.datetime | None
    # A dict, not Repeat: the list reads rows as they are (talorys/web/schema_rows.py); it is
    # stored only after the Repeat schema of the input checked it.
    repeat: dict[str, Any] | None = Field(
        description="How the task repeats (a daily, weekly, monthly or cron schedule, as the "
        "input's repeat); null when it does not."
    )
    created_at: dt.datetime
    updated_at: dt.datetime
    version: int


class TaskWordsIn(In):
    text: str = Field(
        min_length=1,
        max_length=Task.TITLE_MAX,
        description=(
            "What to do and when, in the owner's words: “pick up parcel friday 5pm”, or "
            "repeating: “water plants every monday 8am”. A named weekday is the first such day "
            "after today (“this friday” may be today)."
        ),
    )


class TaskReadOut(Schema):
    """What ``POST /api/tasks/quick`` read in the text."""

    title: str
    due_at: dt.datetime | None = Field(description="The due date read; null when none was.")
    words: str = Field(description="The words read as the date (“friday 5pm”); empty if none.")
    said: str = Field(
        description="The due date or repeat in words (“Due Fri 4 Dec, 17:00”, “Every Monday "
        "at 08:00”); empty if none."
    )
    repeat: Repeat | None = Field(
        None, description="The repeat read (“every monday 8am”); null when none was."
    )


class TaskQuickOut(TaskOut):
    read: TaskReadOut


class TaskFilters(Schema):
    status: TaskStatus | None = None
    project: Id | None = None
    due_before: BoundedDatetime | None = None
    due_after: BoundedDatetime | None = None
    due: TaskDue | None = None
    q: QueryText | None = Field(None, max_length=QUERY_MAX)


class ProjectIn(In):
    name: str = Field(min_length=1, max_length=Project.NAME_MAX)
    description: str = Field("", max_length=Project.DESCRIPTION_MAX)


class ProjectPatch(In):
    # A name left out keeps it; null is refused (the schema has no null).
    name: Annotated[str | None, NOT_NULL] = Field(None, min_length=1, max_length=Project.NAME_MAX)
    description: str | None = Field(None, max_length=Project.DESCRIPTION_MAX)
    version: ExpectedVersion = None


class ProjectOut(Schema):
    id: int
    name: str
    description: str
    created_at: dt.datetime
    updated_at: dt.datetime
    version: int


class NoteIn(In):
    title: str = Field(min_length=1, max_length=Note.TITLE_MAX)
    content: str = Field("", max_length=Note.CONTENT_MAX)


class NotePatch(In):
    # A title left out keeps it; null is refused (the schema has no null).
    title: Annotated[str | None, NOT_NULL] = Field(None, min_length=1, max_length=Note.TITLE_MAX)
    content: str | None = Field(None, max_length=Note.CONTENT_MAX)
    version: ExpectedVersion = None


class NoteTaskTick(In):
    """Tick or untick one checkbox of a note's task list (``- [ ] cheese``)."""

    ticked: bool = Field(description="True ticks the box ([x]), false unticks it ([ ]).")
    version: int = Field(
        ge=1,
        le=2**31 - 1,
        description=(
            "The note's version the checkbox was shown in (required: the index counts that "
            "version's checkboxes). If the note has changed since, nothing changes and the "
            "answer is 409 CONFLICT."
        ),
    )


class NoteOut(Schema):
    id: int
    title: str
    content: str
    created_at: dt.datetime
    updated_at: dt.datetime
    version: int
