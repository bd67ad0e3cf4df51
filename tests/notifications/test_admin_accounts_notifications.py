"""The admin's tokens, notifications and push subscriptions go through the services: a token's scope or name changed there is the service's change, audited in
``talorys.audit``; a revoked token, a token's owner, notifications and push subscriptions are
not edited by hand (marking read and removing go through the services)."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.models import User

from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_create, api_token_revoke
from talorys.notifications import push
from talorys.notifications.models import Notification, PushSubscription
from talorys.notifications.services import notification_create
from tests.workspace.test_admin_services import errors_of, operator, post, url

__all__ = ["operator"]  # the fixture, shared with test_admin_services


@pytest.fixture
def owner_user(operator) -> User:
    return User.objects.get(username="owner")


@pytest.fixture
def audit(caplog) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="talorys.audit")
    return caplog


def audit_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "talorys.audit"]


def test_raising_a_tokens_scope_in_the_admin_goes_through_the_service_and_is_audited(
    operator, owner_user, audit, django_capture_on_commit_callbacks
):
    token, raw = api_token_create(user=owner_user, name="script")
    audit.clear()

    with django_capture_on_commit_callbacks(execute=True):
        response = post(operator, url(ApiToken, "change", token.pk), scope="write")

    assert response.status_code == 302, response.content[:500]
    token.refresh_from_db()
    assert token.scope == "write"
    assert audit_lines(audit) == [
        f"API token {token.pk} ({token.prefix}, 'script') scope changed from 'read' to 'write'"
        " by admin:owner"
    ]


def test_a_bad_scope_or_a_revoked_token_changes_nothing_in_the_admin(
    operator, owner_user, audit, django_capture_on_commit_callbacks
):
    token, _raw = api_token_create(user=owner_user, name="script")
    audit.clear()
    with django_capture_on_commit_callbacks(execute=True):
        bad = post(operator, url(ApiToken, "change", token.pk), scope="admin")
    assert bad.status_code == 200 and "admin is not one of the available choices" in errors_of(bad)

    with django_capture_on_commit_callbacks(execute=True):
        api_token_revoke(user=owner_user, token_id=token.pk)
    with django_capture_on_commit_callbacks(execute=True):
        revoked = post(operator, url(ApiToken, "change", token.pk), scope="write", name="x")
    assert revoked.status_code == 302  # nothing to change: every field is read-only now
    token.refresh_from_db()
    assert (token.scope, token.name) == ("read", "script")
    assert audit_lines(audit) == [
        f"API token {token.pk} ({token.prefix}, 'script') revoked by owner"
    ]


def test_a_token_is_made_and_revoked_in_the_admin_through_the_services_never_deleted(
    operator, owner_user, audit, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        made = operator.post(
            url(ApiToken, "add"), {"user": owner_user.pk, "name": "backup", "scope": "read"}
        )
    assert made.status_code == 200
    token = ApiToken.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        operator.post(
            url(ApiToken, "changelist"), {"action": "revoke", "_selected_action": [token.pk]}
        )
    assert audit_lines(audit) == [
        f"API token {token.pk} ({token.prefix}, 'backup') made with scope read by admin:owner",
        f"API token {token.pk} ({token.prefix}, 'backup') revoked by admin:owner",
    ]
    assert operator.get(url(ApiToken, "delete", token.pk)).status_code == 403
    assert ApiToken.objects.filter(pk=token.pk).exists()


def test_notifications_are_read_only_in_the_admin_and_marked_read_through_the_service(operator):
    notification = notification_create(title="Call Sam")
    page = url(Notification, "change", notification.pk)

    assert operator.post(page, {"title": "Rewritten", "kind": "info"}).status_code == 403
    assert operator.get(url(Notification, "add")).status_code == 403
    response = operator.post(
        url(Notification, "changelist"),
        {"action": "mark_read", "_selected_action": [notification.pk]},
    )
    assert response.status_code == 302
    notification.refresh_from_db()
    assert notification.title == "Call Sam" and notification.read_at is not None


def test_push_subscriptions_cannot_be_pointed_elsewhere_in_the_admin_only_removed(operator):
    subscription = PushSubscription.objects.create(
        endpoint="https://93.184.215.14/push/1", p256dh="k", auth="a"
    )
    page = url(PushSubscription, "change", subscription.pk)

    changed = operator.post(page, {"endpoint": "http://127.0.0.1:6379/", "active": "on"})
    assert changed.status_code == 403
    assert operator.get(url(PushSubscription, "add")).status_code == 403
    subscription.refresh_from_db()
    assert subscription.endpoint == "https://93.184.215.14/push/1"

    response = operator.post(
        url(PushSubscription, "changelist"),
        {"action": "remove", "_selected_action": [subscription.pk]},
    )
    assert response.status_code == 302
    assert not PushSubscription.objects.exists()
    assert push.push_subscription_list().count() == 0
