"""The admin is an edge like the API: its edits and deletes go through the services, a
service's refusal shows on the form and changes nothing, pending actions and their audit trail
cannot be touched by hand, and rows in the bin show as such.

Each test drives the real admin with the Django test client, as a superuser, and posts the form
the change page rendered (as a browser would), changed where the test says.
"""

from __future__ import annotations

import datetime as dt
import json
from html.parser import HTMLParser

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agent.models import Conversation, Message
from approvals.models import ApprovalEvent, PendingAction
from automations.models import Automation
from automations.services.crud import automation_create
from memory import services as memory_services
from memory.models import Memory, MemoryRevision
from talorys.history.models import Change
from talorys.owner.models import OwnerSettings
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services
from talorys.workspace.models import Note, Project, Task


@pytest.fixture
def operator(owner) -> Client:
    # The owner operates the admin: Talorys has one superuser (talorys/accounts/owner.py).
    client = Client()
    client.force_login(owner)
    return client


def url(model: type, view: str, *args: object) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


class _FormFields(HTMLParser):
    """What a browser would post from the page's main form (not the logout form)."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, list[str]] = {}
        self.in_form = False
        self.select: str | None = None
        self.select_first: str | None = None
        self.select_chosen = False
        self.textarea: str | None = None

    def _add(self, name: str, value: str) -> None:
        self.data.setdefault(name, []).append(value)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.in_form = a.get("id", "").endswith("_form")
        if not self.in_form or "name" not in a and tag != "option":
            return
        if tag == "input":
            kind = a.get("type", "text")
            if kind in ("submit", "button", "file", "image"):
                return
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            self._add(a["name"], a.get("value", "on" if kind == "checkbox" else ""))
        elif tag == "textarea":
            self.textarea = a["name"]
            self._add(a["name"], "")
        elif tag == "select":
            self.select, self.select_first, self.select_chosen = a["name"], None, False
        elif tag == "option" and self.select:
            if self.select_first is None:
                self.select_first = a.get("value", "")
            if "selected" in a:
                self._add(self.select, a.get("value", ""))
                self.select_chosen = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.in_form = False
        elif tag == "textarea":
            self.textarea = None
        elif tag == "select" and self.select:
            if not self.select_chosen and self.select_first is not None:
                self._add(self.select, self.select_first)
            self.select = None

    def handle_data(self, data: str) -> None:
        if self.textarea:
            self.data[self.textarea][-1] += data.removeprefix("\n")


def form_of(client: Client, page_url: str) -> dict[str, list[str] | str]:
    page = client.get(page_url)
    assert page.status_code == 200, page.content[:300]
    parser = _FormFields()
    parser.feed(page.content.decode())
    return dict(parser.data)


def post(client: Client, page_url: str, **changes: object):
    data = form_of(client, page_url) | {k: str(v) for k, v in changes.items()}
    return client.post(page_url, data)


def errors_of(response) -> str:
    form = response.context["adminform"].form
    return " ".join(str(e) for errs in form.errors.values() for e in errs)


# --- pending actions and their audit trail: read-only -----------------------------------------


@pytest.fixture
def expired_action(db) -> PendingAction:
    task = services.task_create(title="Old errand")
    return PendingAction.objects.create(
        tool="delete_task",
        target_id=task.pk,
        snapshot="s",
        payload={"task_id": task.pk},
        summary="Delete the task “Old errand”",
        status=PendingAction.Status.EXPIRED,
        expires_at=timezone.now() - dt.timedelta(minutes=5),
        decided_at=timezone.now() - dt.timedelta(minutes=5),
    )


def test_a_pending_action_cannot_be_reopened_or_rewritten_in_the_admin(operator, expired_action):
    action = expired_action
    page = operator.get(url(PendingAction, "change", action.pk))
    assert page.status_code == 200  # shown, as a read-only page
    assert b'name="status"' not in page.content and b'name="payload"' not in page.content

    response = operator.post(
        url(PendingAction, "change", action.pk),
        {
            "status": "pending",
            "expires_at_0": "2099-01-01",
            "expires_at_1": "00:00:00",
            "payload": json.dumps({"task_id": 999}),
            "events-TOTAL_FORMS": "0",
            "events-INITIAL_FORMS": "0",
        },
    )

    assert response.status_code == 403
    action.refresh_from_db()
    assert (action.status, action.payload) == ("expired", {"task_id": action.target_id})
    assert action.expires_at < timezone.now()
    assert not ApprovalEvent.objects.exists()


def test_pending_actions_cannot_be_added_or_deleted_in_the_admin(operator, expired_action):
    assert operator.get(url(PendingAction, "add")).status_code == 403
    assert operator.post(url(PendingAction, "add"), {"tool": "delete_task"}).status_code == 403
    assert (
        operator.post(url(PendingAction, "delete", expired_action.pk), {"post": "yes"}).status_code
        == 403
    )
    bulk = operator.post(
        url(PendingAction, "changelist"),
        {"action": "delete_selected", "_selected_action": [expired_action.pk], "post": "yes"},
    )
    assert bulk.status_code == 200  # the action is not offered: the list again
    assert PendingAction.objects.filter(pk=expired_action.pk).exists()


def test_transcripts_and_memory_histories_cannot_be_cut_in_the_admin(operator):
    conversation = Conversation.objects.create(title="Trip")
    message = Message.objects.create(conversation=conversation, role="user", content="Plan it")
    memory = memory_services.memory_create_unchecked(text="Lives in Lyon")
    revision = memory.revisions.get()

    assert operator.post(url(Message, "delete", message.pk), {"post": "yes"}).status_code == 403
    assert (
        operator.post(url(MemoryRevision, "delete", revision.pk), {"post": "yes"}).status_code
        == 403
    )
    page = operator.get(url(Conversation, "change", conversation.pk))
    assert b"messages-0-DELETE" not in page.content
    assert Message.objects.filter(pk=message.pk).exists()
    assert MemoryRevision.objects.filter(pk=revision.pk).exists()


# --- automations: a schedule edited in the admin re-arms -----------------------------------------


@pytest.fixture
def daily(db) -> Automation:
    return automation_create(
        name="Stretch", kind="reminder", schedule={"type": "daily", "time": "08:00"}
    )


def test_a_schedule_edited_in_the_admin_re_arms_and_voids_queued_runs(operator, daily):
    before = Automation.objects.get(pk=daily.pk)

    response = post(operator, url(Automation, "change", daily.pk), schedule_time="21:30")

    assert response.status_code == 302, errors_of(response)
    after = Automation.objects.get(pk=daily.pk)
    assert after.schedule["time"] == "21:30"
    assert after.version == before.version + 1  # a run claimed under the old one is void
    assert after.next_run_at != before.next_run_at
    assert (after.next_run_at.hour, after.next_run_at.minute) == (21, 30)  # owner zone: UTC


def test_renaming_an_automation_in_the_admin_keeps_its_slot(operator, daily):
    before = Automation.objects.get(pk=daily.pk)

    response = post(operator, url(Automation, "change", daily.pk), name="Stretch a bit")

    assert response.status_code == 302, errors_of(response)
    after = Automation.objects.get(pk=daily.pk)
    assert after.name == "Stretch a bit"
    assert (after.version, after.next_run_at) == (before.version, before.next_run_at)


def test_pausing_in_the_admin_disarms_and_a_bad_schedule_changes_nothing(operator, daily):
    data = form_of(operator, url(Automation, "change", daily.pk))
    del data["enabled"]  # unticked: a browser does not post the box at all
    assert operator.post(url(Automation, "change", daily.pk), data).status_code == 302
    after_pause = Automation.objects.get(pk=daily.pk)
    assert (after_pause.enabled, after_pause.next_run_at) == (False, None)

    response = post(operator, url(Automation, "change", daily.pk), schedule_time="25:00")

    assert response.status_code == 200
    assert "valid time" in " ".join(response.context["adminform"].form.errors["schedule_time"])
    assert Automation.objects.get(pk=daily.pk).schedule == after_pause.schedule


def test_the_schedule_widget_saves_a_weekly_schedule_through_the_service(operator, daily):
    page = operator.get(url(Automation, "change", daily.pk)).content.decode()
    assert 'name="schedule"' not in page  # no raw JSON
    assert 'name="schedule_time" value="08:00"' in page

    response = operator.post(
        url(Automation, "change", daily.pk),
        form_of(operator, url(Automation, "change", daily.pk))
        | {"schedule_type": "weekly", "schedule_days": ["fri", "mon"], "schedule_time": "18:15"},
    )

    assert response.status_code == 302, errors_of(response)
    after = Automation.objects.get(pk=daily.pk)
    assert after.schedule == {"type": "weekly", "days": ["mon", "fri"], "time": "18:15"}
    assert after.version == daily.version + 1  # re-armed by automation_update
    assert after.next_run_at.strftime("%a %H:%M") in ("Mon 18:15", "Fri 18:15")
    assert Change.objects.filter(kind="automation", source="admin:owner").exists()


def test_an_automation_added_in_the_admin_takes_the_schedule_fields(operator):
    response = post(
        operator,
        url(Automation, "add"),
        name="Rent",
        kind="reminder",
        schedule_type="monthly",
        schedule_day="32",
        schedule_time="09:00",
    )
    assert response.status_code == 200
    assert "31" in " ".join(response.context["adminform"].form.errors["schedule_day"])
    assert not Automation.objects.exists()

    made = post(
        operator,
        url(Automation, "add"),
        name="Rent",
        kind="reminder",
        schedule_type="monthly",
        schedule_day="1",
        schedule_time="09:00",
    )

    assert made.status_code == 302, errors_of(made)
    assert Automation.objects.get().schedule == {"type": "monthly", "day": 1, "time": "09:00"}


# --- tasks, notes, projects: through the services ----------------------------------------------


def test_a_task_edited_with_a_bad_value_shows_the_error_and_changes_nothing(operator):
    task = services.task_create(title="Pay rent", details="Before Friday")
    too_long = "x" * 20_001  # the model field has no limit; task_update has

    response = post(operator, url(Task, "change", task.pk), title="Pay the rent", details=too_long)

    assert response.status_code == 200
    assert "details is longer than 20000 characters" in errors_of(response)
    task.refresh_from_db()
    assert (task.title, task.details) == ("Pay rent", "Before Friday")


def test_a_task_cannot_be_moved_into_a_binned_project_from_the_admin(operator):
    binned = services.project_create(name="Old house")
    task = services.task_create(title="Pay rent")
    Project.objects.filter(pk=binned.pk).update(deleted_at=timezone.now())

    response = post(operator, url(Task, "change", task.pk), project=binned.pk)

    assert response.status_code == 200
    assert "does not exist" in response.context["adminform"].form.errors["project"][0]
    assert Task.objects.get(pk=task.pk).project_id is None

    added = post(operator, url(Task, "add"), title="Buy paint", project=binned.pk)
    assert added.status_code == 200
    assert not Task.objects.filter(title="Buy paint").exists()


def test_completing_a_task_in_the_admin_records_when_like_the_api(operator):
    task = services.task_create(title="Pay rent")

    response = post(operator, url(Task, "change", task.pk), status="done")

    assert response.status_code == 302, errors_of(response)
    task.refresh_from_db()
    assert task.status == "done" and task.completed_at is not None


def test_a_note_too_long_for_the_service_is_refused_on_the_add_form(operator):
    response = post(operator, url(Note, "add"), title="Essay", content="x" * 200_001)

    assert response.status_code == 200
    assert "content is longer than 200000 characters" in errors_of(response)
    assert not Note.objects.exists()


def test_a_project_added_in_the_admin_is_cleaned_by_the_service(operator):
    response = post(operator, url(Project, "add"), name="  Garden  ", description="")

    assert response.status_code == 302, errors_of(response)
    assert Project.objects.get().name == "Garden"


# --- deleting: the service, one object at a time -----------------------------------------------


def test_deleting_a_conversation_with_a_turn_running_is_refused_like_for_the_owner(operator):
    busy = Conversation.objects.create(
        title="Busy", turn_id="t-1", turn_lease_until=timezone.now() + dt.timedelta(minutes=1)
    )
    idle = Conversation.objects.create(title="Idle")

    one = operator.post(url(Conversation, "delete", busy.pk), {"post": "yes"}, follow=True)
    assert "Cancel it first" in one.content.decode()
    bulk = operator.post(
        url(Conversation, "changelist"),
        {"action": "delete_selected", "_selected_action": [busy.pk, idle.pk], "post": "yes"},
        follow=True,
    )

    assert bulk.status_code == 200
    assert "Not deleted: Busy" in bulk.content.decode()
    assert Conversation.objects.filter(pk=busy.pk, turn_id="t-1").exists()
    assert not Conversation.objects.filter(pk=idle.pk, **_live(Conversation)).exists()


def _live(model: type) -> dict:
    """Live rows: not in the bin where the model has one."""
    fields = {f.name for f in model._meta.concrete_fields}
    return {"deleted_at__isnull": True} if "deleted_at" in fields else {}


def test_the_delete_confirmation_lists_only_the_selected_objects(operator, daily):
    page = operator.post(
        url(Automation, "changelist"),
        {"action": "delete_selected", "_selected_action": [daily.pk]},
    )

    assert page.status_code == 200
    assert "Automation: Stretch" in page.content.decode()
    assert "permission" not in page.content.decode()  # its receipts are not deleted by hand


# --- the bin in lists ---------------------------------------------------------------------------


def test_binned_rows_are_marked_filterable_and_read_only(operator):
    live = services.note_create(title="Recipes")
    binned = services.note_create(title="Old list")
    Note.objects.filter(pk=binned.pk).update(deleted_at=timezone.now())

    listing = operator.get(url(Note, "changelist"))
    assert listing.status_code == 200
    assert "in the bin" in listing.content.decode().lower()
    only_binned = operator.get(url(Note, "changelist"), {"deleted": "yes"}).content.decode()
    only_live = operator.get(url(Note, "changelist"), {"deleted": "no"}).content.decode()
    assert "Old list" in only_binned and "Recipes" not in only_binned
    assert "Recipes" in only_live and "Old list" not in only_live

    refused = operator.post(url(Note, "change", binned.pk), {"title": "Revived", "content": ""})
    assert refused.status_code == 403
    assert Note.objects.get(pk=binned.pk).title == "Old list"
    assert operator.post(url(Note, "change", live.pk), {"title": "Recipes 2"}).status_code == 302


def test_a_binned_task_is_listed_as_in_the_bin_not_as_open(operator):
    services.task_create(title="Pay rent")
    binned = services.task_create(title="Old errand")
    services.task_delete(task_id=binned.pk)

    listing = operator.get(url(Task, "changelist")).content.decode()
    open_ = operator.get(url(Task, "changelist"), {"status__exact": "open"}).content.decode()

    row = listing[listing.index("Old errand") :].split("</tr>")[0]
    assert "In the bin" in row and "Open" not in row
    assert "Pay rent" in open_ and "Old errand" not in open_


@pytest.mark.parametrize("model", [Task, Project, Note, Memory, Automation, Conversation])
def test_every_binnable_list_has_the_bin_column_and_filter(operator, model):
    page = operator.get(url(model, "changelist"))

    assert page.status_code == 200
    assert "in_the_bin" in page.context["cl"].list_display
    assert "deleted=yes" in page.content.decode()


def test_a_memory_edited_in_the_admin_keeps_a_revision(operator):
    memory = memory_services.memory_create_unchecked(text="Lives in Lyon")

    response = post(operator, url(Memory, "change", memory.pk), text="Lives in Lisbon")

    assert response.status_code == 302, errors_of(response)
    assert list(memory.revisions.order_by("id").values_list("action", "text")) == [
        ("create", "Lives in Lyon"),
        ("update", "Lives in Lisbon"),
    ]


# --- owner settings: the owner's rules ------------------------------------------------------------


def test_a_provider_url_changed_in_the_admin_clears_its_key_like_the_api(operator):
    owner_settings_update(
        model_base_url="https://models.example.com/v1", model_api_key="sk-secret-key"
    )
    page = url(OwnerSettings, "change", 1)

    kept = post(operator, page, time_zone="Europe/Paris")
    assert kept.status_code == 302, errors_of(kept)
    assert OwnerSettings.objects.get().model_api_key == "sk-secret-key"

    moved = post(operator, page, model_base_url="https://elsewhere.example.net/v1")

    assert moved.status_code == 302, errors_of(moved)
    row = OwnerSettings.objects.get()
    assert (row.model_base_url, row.model_api_key) == ("https://elsewhere.example.net/v1", "")
    assert row.time_zone == "Europe/Paris"


# --- lists: as many queries for twenty rows as for one --------------------------------------------


def _make(model: type, i: int) -> None:
    if model is Memory:
        memory = memory_services.memory_create_unchecked(text=f"Fact {i}")
        memory_services.memory_update_unchecked(memory_id=memory.pk, text=f"Fact {i}, corrected")
    elif model is Task or model is Project:
        project = services.project_create(name=f"Project {i}")
        services.task_create(title=f"Task {i}", project_id=project.pk)
    elif model is Note:
        services.note_create(title=f"Note {i}")
    elif model is Automation:
        automation_create(
            name=f"Auto {i}", kind="reminder", schedule={"type": "daily", "time": "08:00"}
        )
    elif model is Conversation:
        Conversation.objects.create(title=f"Chat {i}")
    elif model is PendingAction:
        task = services.task_create(title=f"Task {i}")
        PendingAction.objects.create(
            tool="delete_task",
            target_id=task.pk,
            snapshot="s",
            summary=f"Delete {i}",
            expires_at=timezone.now() + dt.timedelta(minutes=30),
        )


@pytest.mark.parametrize(
    "model", [Memory, Task, Project, Note, Automation, Conversation, PendingAction]
)
def test_an_admin_list_runs_as_many_queries_for_twenty_rows_as_for_one(operator, model):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert operator.get(url(model, "changelist")).status_code == 200
        return len(queries)

    _make(model, 0)
    count()  # warm
    one = count()
    for i in range(1, 20):
        _make(model, i)

    assert count() == one
