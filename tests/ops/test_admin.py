"""The operator's Django admin: every registered model opens, and repairs go through services."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from agent.models import Conversation, Message
from memory import services as memory_services
from memory.models import Memory, MemoryRevision
from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_authenticate, api_token_create
from talorys.notifications import services as notification_services
from talorys.owner.models import OwnerSettings
from talorys.owner.selectors import owner_settings_get
from talorys.owner.services.settings import owner_settings_update
from talorys.owner.services.usage import usage_reserve
from talorys.workspace import services

# Models whose admin refuses the add page on purpose (their rows are only ever made by the app).
ADD_REFUSED = {
    "approvals.ApprovalEvent",
    "approvals.PendingAction",
    "agent.Message",
    "automations.AutomationRun",
    "memory.MemoryRevision",
    # The recall index is derived data, written by memory.services.reindex only.
    "memory.RecallEntry",
    "memory.IndexState",
    # An upload is checked, sniffed and read by files/services.py: /api/files only.
    "files.File",
    # Counters, the change log and the push outbox: moved by the services only.
    "owner.UsageDay",
    "history.Change",
    "notifications.PushDelivery",
    # Said to the owner, and made by the browser: read, marked read or removed only.
    "notifications.Notification",
    "notifications.PushSubscription",
    # Setup runs and heartbeats: written by talorys_setup, the worker and beat only.
    "ops.SetupRun",
    "ops.Heartbeat",
    # The setting names the system jobs; beat installs them (talorys/ops/beat.py).
    "ops.SystemJob",
}


@pytest.fixture
def operator(owner) -> Client:
    # The owner operates the admin: Talorys has one superuser (talorys/accounts/owner.py).
    client = Client()
    client.force_login(owner)
    return client


@pytest.fixture
def some_data(db):
    project = services.project_create(name="Home")
    services.task_create(title="Pay rent", project_id=project.pk)
    services.note_create(title="Recipes", content="Pancakes")
    notification_services.notification_create(title="Rent is due")
    usage_reserve(kind="ai")
    memory = memory_services.memory_create_unchecked(text="Lives in Lyon")
    conversation = Conversation.objects.create(title="Trip planning")
    Message.objects.create(conversation=conversation, role="user", content="Plan my trip")
    return {"memory": memory, "conversation": conversation}


def registered() -> list[str]:
    return sorted(model._meta.label for model in admin.site._registry)


def url(label: str, view: str, *args) -> str:
    app, model = label.lower().split(".")
    return reverse(f"admin:{app}_{model}_{view}", args=args)


@pytest.mark.parametrize("label", registered())
def test_every_changelist_opens(operator, some_data, label):
    response = operator.get(url(label, "changelist"))

    assert response.status_code == 200, response.content[:500]


@pytest.mark.parametrize("label", registered())
def test_every_add_page_opens(operator, label):
    response = operator.get(url(label, "add"))

    assert response.status_code == (403 if label in ADD_REFUSED else 200)


def test_changelists_search_and_filter(operator, some_data):
    assert b"Pay rent" in operator.get(url("workspace.Task", "changelist"), {"q": "rent"}).content
    assert (
        b"Pay rent" not in operator.get(url("workspace.Task", "changelist"), {"q": "xyz"}).content
    )
    done = operator.get(url("workspace.Task", "changelist"), {"status__exact": "done"})
    assert b"Pay rent" not in done.content
    found = operator.get(url("agent.Conversation", "changelist"), {"q": "my trip"})
    assert b"Trip planning" in found.content


def test_change_pages_show_inlines(operator, some_data):
    memory_page = operator.get(url("memory.Memory", "change", some_data["memory"].pk))
    assert memory_page.status_code == 200
    assert b"Lives in Lyon" in memory_page.content
    assert b"create" in memory_page.content  # the revision inline

    chat_page = operator.get(url("agent.Conversation", "change", some_data["conversation"].pk))
    assert chat_page.status_code == 200
    assert b"Plan my trip" in chat_page.content


def test_an_operator_edit_of_a_memory_is_recorded_in_its_history(operator, some_data):
    memory = some_data["memory"]

    response = operator.post(
        url("memory.Memory", "change", memory.pk),
        {
            "text": "Lives in Lisbon",
            "category": "place",
            "revisions-TOTAL_FORMS": "1",
            "revisions-INITIAL_FORMS": "1",
            "revisions-MIN_NUM_FORMS": "0",
            "revisions-MAX_NUM_FORMS": "1000",
            "revisions-0-id": str(memory.revisions.get().pk),
            "revisions-0-memory": str(memory.pk),
        },
    )

    assert response.status_code == 302, response.content[:2000]
    memory.refresh_from_db()
    assert (memory.text, memory.category) == ("Lives in Lisbon", "place")
    assert list(
        MemoryRevision.objects.filter(memory=memory).order_by("id").values_list("action", "text")
    ) == [("create", "Lives in Lyon"), ("update", "Lives in Lisbon")]


def test_an_operator_can_add_a_memory_with_its_first_revision(operator):
    response = operator.post(
        url("memory.Memory", "add"),
        {
            "text": "Allergic to peanuts",
            "category": "fact",
            "revisions-TOTAL_FORMS": "0",
            "revisions-INITIAL_FORMS": "0",
            "revisions-MIN_NUM_FORMS": "0",
            "revisions-MAX_NUM_FORMS": "1000",
        },
    )

    assert response.status_code == 302, response.content[:2000]
    memory = Memory.objects.get()
    assert memory.revisions.get().action == "create"


def test_a_token_made_in_admin_is_shown_once_and_stored_hashed(operator, owner):
    response = operator.post(
        url("accounts.ApiToken", "add"), {"user": owner.pk, "name": "backup", "scope": "write"}
    )

    assert response.status_code == 200
    raw = response.context["raw"]
    assert raw.encode() in response.content
    token = ApiToken.objects.get()
    assert token.token_hash != raw and raw not in token.token_hash
    assert api_token_authenticate(raw=raw).user == owner
    assert token.scope == ApiToken.Scope.WRITE
    change_page = operator.get(url("accounts.ApiToken", "change", token.pk))
    assert raw.encode() not in change_page.content
    assert token.token_hash.encode() in change_page.content  # shown, but read-only
    changelist = operator.get(url("accounts.ApiToken", "changelist"))
    assert b'class="field-scope">Write<' in changelist.content
    assert b'name="token_hash"' not in change_page.content


def test_the_revoke_action_revokes_only_the_selected_tokens(operator, owner):
    kept, kept_raw = api_token_create(user=owner, name="phone")
    gone, gone_raw = api_token_create(user=owner, name="laptop")

    response = operator.post(
        url("accounts.ApiToken", "changelist"),
        {"action": "revoke", "_selected_action": [gone.pk]},
    )

    assert response.status_code == 302
    assert api_token_authenticate(raw=gone_raw) is None
    assert api_token_authenticate(raw=kept_raw).user == owner
    assert ApiToken.objects.get(pk=kept.pk).revoked_at is None


def test_settings_admin_never_shows_a_key_and_keeps_it_when_left_empty(operator):
    owner_settings_update(model_api_key="sk-secret-key")
    page = operator.get(url("owner.OwnerSettings", "change", 1))
    assert page.status_code == 200
    assert b"sk-secret-key" not in page.content

    form = {
        name: value
        for name, value in OwnerSettings.objects.values().get(pk=1).items()
        if name not in {"id", "updated_at", "model_api_key", "embeddings_api_key"}
    }
    form = {k: ("" if v is None else v) for k, v in form.items()} | {
        "time_zone": "Europe/Paris",
        "semantic_enabled": "",
    }
    response = operator.post(url("owner.OwnerSettings", "change", 1), form)

    assert response.status_code == 302, response.content[:3000]
    row = OwnerSettings.objects.get(pk=1)
    assert row.time_zone == "Europe/Paris"
    assert row.model_api_key == "sk-secret-key"


def test_settings_admin_applies_the_owner_rules(operator):
    owner_settings_get()
    form = {
        name: ("" if value is None else value)
        for name, value in OwnerSettings.objects.values().get(pk=1).items()
        if name not in {"id", "updated_at", "semantic_enabled"}
    } | {"max_steps_per_turn": 0}

    response = operator.post(url("owner.OwnerSettings", "change", 1), form)

    assert response.status_code == 200  # the form again, with the error
    assert b"max_steps_per_turn must be between" in response.content
    assert OwnerSettings.objects.get(pk=1).max_steps_per_turn == 6


def test_owner_settings_stay_one_row(operator):
    assert operator.get(url("owner.OwnerSettings", "add")).status_code == 200
    owner_settings_get()
    assert operator.get(url("owner.OwnerSettings", "add")).status_code == 403
    assert operator.get(url("owner.OwnerSettings", "delete", 1)).status_code == 403


def test_beat_s_own_admin_pages_are_not_in_the_admin(operator):
    # Its jobs are shown as System jobs (talorys/ops/admin.py), without adding one, editing a
    # task's name or arguments, or an interval row that several jobs share.
    assert not [label for label in registered() if label.startswith("django_celery_beat.")]
    index = operator.get(reverse("admin:index")).content
    assert b"Periodic tasks" not in index
    assert b"System jobs" in index


def test_the_admin_index_lists_the_owner_data_first(operator):
    sections = [
        app["app_label"] for app in operator.get(reverse("admin:index")).context["app_list"]
    ]

    assert sections[:4] == ["workspace", "memory", "automations", "approvals"]
    assert sections[-2:] == ["accounts", "auth"]
