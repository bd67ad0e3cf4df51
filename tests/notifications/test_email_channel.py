"""The email channel (Apprise mailto://) to a local SMTP server: the body is plain text, so a
link someone wrote arrives as its text and line breaks stay; a reminder with no text gets its
name as the subject."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine

from automations import tasks
from automations.services.crud import automation_create
from talorys.notifications.channels import apprise_send, channel_create
from talorys.notifications.models import ChannelDelivery
from tests.notifications.smtp import smtp_server  # noqa: F401 (a fixture)

UTC = dt.UTC
NOW = dt.datetime(2026, 1, 15, 9, 30, tzinfo=UTC)


def mail_url(server) -> str:
    port = server.server_address[1]
    return f"mailto://127.0.0.1:{port}?from=talorys@example.com&to=me@example.com"


def test_the_body_is_plain_text_with_its_line_breaks(smtp_server):  # noqa: F811
    body = 'Read <a href="https://evil.example/">this</a>\nthen <b>reply</b>.'
    assert apprise_send(mail_url(smtp_server), title="Check", body=body, kind="info") == ""
    (message,) = smtp_server.messages
    assert message["Subject"] == "Check"
    assert message.get_content_type() == "text/plain"
    assert not message.is_multipart()
    assert message.get_content().replace("\r\n", "\n").strip() == body


@pytest.fixture
def run(django_capture_on_commit_callbacks, eager):
    def run_committed(fn, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return run_committed


def test_a_reminder_without_text_gets_its_name_as_subject(db, run, smtp_server):  # noqa: F811
    channel_create(name="Mail", url=mail_url(smtp_server))
    with time_machine.travel(NOW, tick=False) as clock:
        automation_create(
            name="Water the plants",
            kind="reminder",
            schedule={"type": "once", "at": (NOW + dt.timedelta(minutes=1)).isoformat()},
        )
        clock.move_to(NOW + dt.timedelta(minutes=1, seconds=1))
        assert len(run(tasks.dispatch_and_enqueue)) == 1
    (message,) = smtp_server.messages
    assert message["Subject"] == "Water the plants"
    assert message.get_content().strip() == "Water the plants"
    assert ChannelDelivery.objects.get().status == "sent"
