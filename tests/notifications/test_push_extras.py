"""What an app above notifications adds to its notifications' push (push.register_payload_extra):
the fields it returns ride along, per delivery, never in place of the usual ones, and a failing
extra leaves the push plain rather than unsent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from talorys.notifications import push
from talorys.notifications import services as notify
from talorys.notifications.models import PushDelivery

KIND = "push-extra-test"


@pytest.fixture
def extra() -> Iterator[list[Any]]:
    """Register an extra for KIND (what approvals does in its AppConfig.ready); the calls it got."""
    calls: list[Any] = []
    yield calls
    push._PAYLOAD_EXTRAS.pop(KIND, None)


@pytest.fixture
def pushed(api, push_service, browser, eager, django_capture_on_commit_callbacks):
    response = api.post("/api/push/subscriptions", browser.subscription(push_service.endpoint()))
    assert response.status_code == 201, response.content

    def send(source: str) -> dict[str, Any]:
        with django_capture_on_commit_callbacks(execute=True):
            notify.notification_send(title="Hello", body="There", kind="reminder", source=source)
        return browser.decrypt(push_service.requests[-1].body)

    return send


def test_an_extra_adds_its_fields_for_its_kind_only(extra, pushed):
    def add(notification, delivery):
        extra.append((notification.pk, delivery.pk if delivery else None))
        return {"actions": [{"action": "x", "title": "X"}], "title": "not this"}

    push.register_payload_extra(KIND, add)

    mine = pushed(f"{KIND}:1")
    other = pushed("automation:1")

    assert mine["actions"] == [{"action": "x", "title": "X"}]
    assert mine["title"] == "Hello"  # the usual fields win
    assert "actions" not in other
    delivery = PushDelivery.objects.get(notification__source=f"{KIND}:1")
    assert extra == [(delivery.notification_id, delivery.pk)]


def test_a_failing_extra_sends_the_plain_push(extra, pushed):
    def broken(notification, delivery):
        raise RuntimeError("boom")

    push.register_payload_extra(KIND, broken)

    payload = pushed(f"{KIND}:1")

    assert (payload["title"], payload["body"], payload["url"]) == (
        "Hello",
        "There",
        "/notifications/",
    )
    assert set(payload) == {"id", "title", "body", "kind", "url"}
    assert PushDelivery.objects.get().status == "sent"
