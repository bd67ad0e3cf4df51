"""The chat list marks a conversation another app started through /v1 (origin ``api``)."""

from __future__ import annotations

import pytest

from agent.models import Conversation

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_a_conversation_another_app_started_is_marked_in_the_list(signed_in):
    from playwright.sync_api import expect

    Conversation.objects.create(title="From Open WebUI", origin="api")
    Conversation.objects.create(title="Typed here")
    signed_in.reload()
    expect(signed_in.locator("#conversation-list a")).to_have_text(
        ["Typed here", "API From Open WebUI"]
    )
    expect(signed_in.locator(".origin-badge")).to_have_count(1)
    assert signed_in.csp_violations == []
