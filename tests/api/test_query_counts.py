"""Every list endpoint runs the same number of queries for one row as for twenty: no N+1.

Each case makes ``n`` rows of what the endpoint lists; the test reads the list with 1 row and
again with 20, and compares the queries of the two reads. The listed rows are checked too, so a
case that lists nothing cannot pass by accident. (/api/automations: tests/automations;
/api/bin and /api/changes: their own modules.)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agent.models import Conversation, Message
from approvals.models import ApprovalEvent, PendingAction
from files.models import File
from memory import services as memory_services
from talorys.accounts.services import api_token_create
from talorys.notifications import push
from talorys.notifications import services as notification_services
from talorys.notifications.channels import channel_create
from talorys.notifications.models import ChannelDelivery
from talorys.owner.models import UsageDay
from talorys.owner.services.usage import usage_reserve
from talorys.workspace import services
from tests.notifications.servers import Browser

SMALL, LARGE = 1, 20


@dataclass
class Case:
    url: str | Callable[[dict[str, Any]], str]
    make: Callable[[int, dict[str, Any]], None]  # make rows number start..start+n-1
    rows: Callable[[dict[str, Any]], int]  # how many rows the response lists


def paged(body: dict[str, Any]) -> int:
    return len(body["items"])


def tasks(start: int, n: int, ctx: dict) -> None:
    if "project" not in ctx:  # once: two live projects never share a name
        ctx["project"] = services.project_create(name="Home")
    project = ctx["project"]
    for i in range(start, start + n):
        services.task_create(title=f"Task {i}", project_id=project.pk if i % 2 else None)


def files(start: int, n: int, ctx: dict) -> None:
    for i in range(start, start + n):
        File.objects.create(
            name=f"File {i}.txt", content_type="text/plain", size=1, sha256=f"{i:064x}"
        )


def projects(start: int, n: int, ctx: dict) -> None:
    for i in range(start, start + n):
        project = services.project_create(name=f"Project {i}")
        services.task_create(title=f"Task of {i}", project_id=project.pk)


def notes(start: int, n: int, ctx: dict) -> None:
    for i in range(start, start + n):
        services.note_create(title=f"Note {i}", content="Body")


def notifications(start: int, n: int, ctx: dict) -> None:
    """Each with a failed receipt from a channel, which the list shows."""
    if "channel" not in ctx:
        ctx["channel"] = channel_create(name="Phone", url="ntfy://127.0.0.1:9/t")
    for i in range(start, start + n):
        notification = notification_services.notification_create(title=f"Notification {i}")
        ChannelDelivery.objects.create(
            notification=notification,
            channel=ctx["channel"],
            status="failed",
            error="refused",
            not_before=notification.created_at,
        )


def channels(start: int, n: int, ctx: dict) -> None:
    for i in range(start, start + n):
        channel_create(name=f"Channel {i}", url=f"json://127.0.0.1:9/hook{i}")


def memories(start: int, n: int, ctx: dict) -> None:
    for i in range(start, start + n):
        memory = memory_services.memory_create_unchecked(text=f"Fact {i}")
        memory_services.memory_update_unchecked(memory_id=memory.pk, text=f"Fact {i}, corrected")


def history(start: int, n: int, ctx: dict) -> None:
    memory = ctx.setdefault("memory", memory_services.memory_create_unchecked(text="Fact 0"))
    for i in range(max(start, 1), start + n):  # its creation is the first revision
        memory_services.memory_update_unchecked(memory_id=memory.pk, text=f"Fact {i}")


def conversations(start: int, n: int, ctx: dict) -> None:
    for i in range(start, start + n):
        conversation = Conversation.objects.create(title=f"Chat {i}")
        Message.objects.create(conversation=conversation, role="user", content="Hi")


def _action(i: int, **fields: Any) -> PendingAction:
    task = services.task_create(title=f"Task {i}")
    return PendingAction.objects.create(
        tool="delete_task",
        target_id=task.pk,
        snapshot="s",
        summary=f"Delete the task “Task {i}”",
        expires_at=timezone.now() + dt.timedelta(minutes=30),
        **fields,
    )


def approvals(start: int, n: int, ctx: dict) -> None:
    for i in range(start, start + n):
        _action(i, decided_by=ctx["owner"] if i % 2 else None)


def expired_approvals(start: int, n: int, ctx: dict) -> None:
    """Past their expiry, not yet written by beat: the list reads each as expired."""
    for i in range(start, start + n):
        action = _action(i)
        PendingAction.objects.filter(pk=action.pk).update(
            expires_at=timezone.now() - dt.timedelta(minutes=1)
        )


def audit(start: int, n: int, ctx: dict) -> None:
    for i in range(start, start + n):
        action = _action(i)
        ApprovalEvent.objects.create(
            action=action,
            action_ref=action.pk,
            tool=action.tool,
            target_id=action.target_id,
            summary=action.summary,
            kind="proposed",
            actor="model",
        )


def usage(start: int, n: int, ctx: dict) -> None:
    today = timezone.now().date()
    for i in range(start, start + n):
        UsageDay.objects.create(day=today - dt.timedelta(days=i + 1), ai_requests=100 + i)


def tokens(start: int, n: int, ctx: dict) -> None:
    for i in range(start, start + n):
        api_token_create(user=ctx["owner"], name=f"script {i}")


def subscriptions(start: int, n: int, ctx: dict) -> None:
    browser = Browser()
    for i in range(start, start + n):
        push.push_subscription_create(
            endpoint=f"https://push.example.com/push/{i}",
            p256dh=browser.p256dh,
            auth=browser.auth,
        )


def searchable(start: int, n: int, ctx: dict) -> None:
    if "project" not in ctx:  # once: two live projects never share a name
        ctx["project"] = services.project_create(name="Findme project")
    project = ctx["project"]
    for i in range(start, start + n):
        services.task_create(title=f"Findme task {i}", project_id=project.pk)
        services.note_create(title=f"Findme note {i}")
        memory_services.memory_create_unchecked(text=f"Findme fact {i}")
    # Indexed and embedded now, as the catch-up leaves them: a search's lazy pass would embed
    # (and store) at most 16 new items' vectors, a write per item that is not the read's.
    memory_services.reindex()


CASES: dict[str, Case] = {
    "tasks": Case("/api/tasks", tasks, paged),
    "projects": Case("/api/projects", projects, paged),
    "notes": Case("/api/notes", notes, paged),
    "files": Case("/api/files", files, paged),
    "notifications": Case("/api/notifications", notifications, paged),
    "memories": Case("/api/memories", memories, paged),
    "memory history": Case(lambda ctx: f"/api/memories/{ctx['memory'].pk}/history", history, paged),
    "conversations": Case("/api/conversations", conversations, paged),
    "approvals": Case("/api/approvals?status=all", approvals, paged),
    "approvals, expired as read": Case("/api/approvals?status=expired", expired_approvals, paged),
    "approvals audit": Case("/api/approvals/audit", audit, paged),
    "usage": Case(
        "/api/usage", usage, lambda body: sum(d["ai_requests"] >= 100 for d in body["days"])
    ),
    "tokens": Case("/api/auth/tokens", tokens, paged),
    "push subscriptions": Case("/api/push/subscriptions", subscriptions, paged),
    "channels": Case("/api/channels", channels, paged),
    # Recall ranks across kinds and returns the best ``limit`` overall: two kinds, 40 hits.
    "search": Case(
        "/api/search?q=findme&kinds=tasks,memories&limit=50",
        searchable,
        lambda body: len([hit for hit in body["items"] if hit["kind"] == "task"]),
    ),
}


def read(api, case: Case, ctx: dict) -> tuple[int, int]:
    url = case.url(ctx) if callable(case.url) else case.url
    with CaptureQueriesContext(connection) as queries:
        response = api.get(url)
    assert response.status_code == 200, response.content[:500]
    return len(queries), case.rows(response.json())


@pytest.mark.parametrize("name", CASES)
def test_a_list_runs_as_many_queries_for_twenty_rows_as_for_one(api, owner, name):
    case, ctx = CASES[name], {"owner": owner}
    usage_reserve(kind="ai")  # today's usage row, so both reads find it
    case.make(0, 0, ctx)
    read(api, case, ctx)  # warm: the session, the owner's settings

    case.make(0, SMALL, ctx)
    small, small_rows = read(api, case, ctx)
    case.make(SMALL, LARGE - SMALL, ctx)
    large, large_rows = read(api, case, ctx)

    assert (small_rows, large_rows) == (SMALL, LARGE)
    assert large == small, f"{name}: {small} queries for {SMALL} row(s), {large} for {LARGE}"


def paged_lists() -> set[str]:
    """Every GET operation whose answer is a page of items, read from the OpenAPI schema."""
    from config.api import api

    schema = api.get_openapi_schema()
    components = schema["components"]["schemas"]
    found = set()
    for path, item in schema["paths"].items():
        responses = item.get("get", {}).get("responses", {})
        answer = responses.get(200) or responses.get("200") or {}
        body = answer.get("content", {}).get("application/json", {}).get("schema", {})
        if "$ref" in body:
            body = components[body["$ref"].rsplit("/", 1)[-1]]
        if {"items", "count"} <= set(body.get("properties", {})):
            found.add(path.rstrip("/"))
    return found


def test_every_paged_list_is_counted_here_or_in_its_own_module():
    counted_elsewhere = {
        "/api/automations",  # tests/automations (h3)
        "/api/automations/{automation_id}/runs",
        "/api/bin",  # tests/history/test_bin.py (h2)
        "/api/changes",
        "/api/imports",  # tests/imports/test_history.py
    }
    here = {"/api/memories/{memory_id}/history"} | {
        case.url.split("?")[0] for case in CASES.values() if isinstance(case.url, str)
    }
    assert "/api/tasks" in paged_lists()
    assert paged_lists() - counted_elsewhere - here == set()
