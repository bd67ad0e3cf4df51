"""Structured logs (talorys/lib/logs.py): JSON lines with the request id and the turn id, the
X-Request-ID header, and plain lines by default."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import logging.config
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.test import AsyncClient, Client
from django.utils import timezone

from agent.runner import run_scheduled_reply
from automations import tasks
from automations.services.crud import automation_create
from talorys.lib.logs import PLAIN_FORMAT, logging_config
from talorys.providers.base import ProviderError
from tests.agent.fake_openai import error, text, tool_calls
from tests.agent.test_chat_api import read_events
from tests.agent.test_runner import TURN_DATABASE, turn, use_fake

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

Lines = Callable[[], list[Any]]


@contextmanager
def _configured(*, json_lines: bool) -> Iterator[io.StringIO]:
    """The project's logging config (as settings.LOGGING builds it), writing to a buffer."""
    stream = io.StringIO()
    config = logging_config(json_lines=json_lines, level="INFO")
    config["handlers"]["console"]["stream"] = stream
    logging.config.dictConfig(config)
    try:
        yield stream
    finally:
        logging.config.dictConfig(settings.LOGGING)  # the test settings' quiet config


@pytest.fixture
def json_logs() -> Iterator[Lines]:
    """The JSON lines logged so far, parsed (each one must parse)."""
    with _configured(json_lines=True) as stream:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]


@pytest.fixture
def plain_logs() -> Iterator[Callable[[], list[str]]]:
    with _configured(json_lines=False) as stream:
        yield lambda: stream.getvalue().splitlines()


def lines_about(lines: list[dict[str, Any]], start: str) -> list[dict[str, Any]]:
    return [line for line in lines if line["message"].startswith(start)]


# --- the request id -----------------------------------------------------------------------------


def test_a_sane_incoming_request_id_is_answered_and_on_the_request_log_lines(db, json_logs):
    response = Client().get("/api/nothing-here", headers={"X-Request-ID": "edge-7f3a.42:b"})

    assert response.status_code == 404
    assert response["X-Request-ID"] == "edge-7f3a.42:b"
    (line,) = lines_about(json_logs(), "Not Found")
    assert line["request_id"] == "edge-7f3a.42:b"
    assert (line["level"], line["logger"]) == ("WARNING", "django.request")
    assert dt.datetime.fromisoformat(line["time"]).utcoffset() == dt.timedelta(0)


def test_without_an_incoming_id_each_request_gets_its_own(db, json_logs):
    first = Client().get("/api/nothing-here")
    second = Client().get("/api/nothing-here")

    ids = [first["X-Request-ID"], second["X-Request-ID"]]
    assert all(re.fullmatch(r"[0-9a-f]{32}", value) for value in ids)
    assert ids[0] != ids[1]
    assert [line["request_id"] for line in lines_about(json_logs(), "Not Found")] == ids


@pytest.mark.parametrize(
    "hostile",
    [
        "abc\nINFO forged: line",
        "a" * 500,
        "has spaces",
        '"quoted"',
        "<script>",
        "",
        "é-accented",
    ],
)
def test_a_hostile_incoming_id_is_replaced_never_echoed(db, json_logs, hostile):
    response = Client().get("/api/nothing-here", headers={"X-Request-ID": hostile})

    answered = response["X-Request-ID"]
    assert answered != hostile
    assert re.fullmatch(r"[0-9a-f]{32}", answered)
    (line,) = lines_about(json_logs(), "Not Found")
    assert line["request_id"] == answered


def test_the_id_is_answered_on_pages_and_under_asgi_too(db, json_logs):
    page = Client().get("/login/", headers={"X-Request-ID": "page-1"})
    response = async_to_sync(AsyncClient().get)(
        "/api/nothing-here", headers={"X-Request-ID": "async-1"}
    )

    assert page["X-Request-ID"] == "page-1"
    assert response.status_code == 404
    assert response["X-Request-ID"] == "async-1"
    assert [line["request_id"] for line in lines_about(json_logs(), "Not Found")] == ["async-1"]


def test_outside_a_request_there_is_no_request_id(json_logs):
    logging.getLogger("talorys.test").warning("from a worker")

    (line,) = json_logs()
    assert "request_id" not in line and "turn_id" not in line


def test_a_multiline_message_and_a_traceback_stay_one_json_line(json_logs):
    try:
        raise ValueError("broken\nin two")
    except ValueError:
        logging.getLogger("talorys.test").exception("Failed:\nhere")

    (line,) = json_logs()
    assert line["message"] == "Failed:\nhere"
    assert "ValueError: broken" in line["exc"]


# --- the turn id --------------------------------------------------------------------------------


def test_every_line_of_a_chat_turn_carries_its_turn_id(db, fake_openai, json_logs):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("create_task", json.dumps({"title": "Call the plumber"}))),
        text("Added it."),
    )

    turn(text="Add a task to call the plumber")
    turn(text="Anything else?")

    lines = json_logs()
    started = lines_about(lines, "Turn started")
    assert len(started) == 2
    first, second = (line["turn_id"] for line in started)
    assert first and second and first != second
    (tool,) = lines_about(lines, "Tool create_task")
    assert (tool["turn_id"], tool["tool"], tool["outcome"]) == (first, "create_task", "ok")
    ended = lines_about(lines, "Turn ended")
    assert [line["turn_id"] for line in ended] == [first, second]
    assert ended[0]["status"] == "complete"
    assert ended[0]["tool_calls"] == 1
    assert isinstance(ended[0]["duration_ms"], int)
    logging.getLogger("talorys.test").warning("after the turns")
    assert "turn_id" not in json_logs()[-1]


def test_the_sse_stream_keeps_the_turn_id_across_its_steps(api, fake_openai, json_logs):
    # Each event of the SSE stream is awaited in a task of its own (agent/api.py).
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("create_task", '{"title": "Renew passport"}')), text("Added it.")
    )

    response = api.stream("/api/chat", {"text": "Add a task to renew my passport"})
    assert read_events(response)[-1][1]["status"] == "complete"

    lines = json_logs()
    ids = {
        line.get("turn_id")
        for line in lines
        if line["message"].startswith(("Turn started", "Tool ", "Turn ended"))
    }
    assert len(ids) == 1 and ids != {None}


def test_a_provider_error_is_logged_with_its_kind(db, fake_openai, json_logs):
    use_fake(fake_openai)
    fake_openai.script(error(401, "bad key"))

    events = turn(text="Hello")

    assert events[-1]["status"] == "error"
    lines = json_logs()
    (failure,) = lines_about(lines, "Provider error")
    assert (failure["kind"], failure["level"]) == ("auth", "WARNING")
    (ended,) = lines_about(lines, "Turn ended")
    assert (ended["status"], ended["error_code"]) == ("error", "PROVIDER_AUTH")
    assert failure["turn_id"] == ended["turn_id"] != ""


def test_a_scheduled_run_has_a_turn_id_and_its_automation_run_is_logged(
    db, fake_openai, json_logs, django_capture_on_commit_callbacks
):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("list_tasks", json.dumps({"status": "open"}))), text("Nothing is open.")
    )
    automation = automation_create(
        name="Morning",
        kind="agent_prompt",
        message="What is open?",
        schedule={"type": "daily", "time": "08:00"},
    )

    with django_capture_on_commit_callbacks(execute=True):
        tasks.run_automation(automation.pk, timezone.now().isoformat(), automation.version)

    lines = json_logs()
    turn_lines = [
        line for line in lines if line["message"].startswith(("Scheduled turn", "Tool list_tasks"))
    ]
    assert len(turn_lines) == 3
    assert len({line["turn_id"] for line in turn_lines}) == 1 and turn_lines[0]["turn_id"]
    assert turn_lines[-1]["status"] == "ok"
    (run,) = lines_about(lines, f"Automation {automation.pk} run")
    assert (run["status"], run["automation_id"]) == ("ok", automation.pk)
    assert "turn_id" not in run


def test_a_scheduled_provider_error_is_logged_with_its_kind(db, fake_openai, json_logs):
    use_fake(fake_openai)
    fake_openai.script(error(500, "down"))

    with pytest.raises(ProviderError):
        run_scheduled_reply(prompt="What is open?", source="automation:3")

    (failure,) = lines_about(json_logs(), "Provider error")
    assert failure["kind"] == "bad_response" and failure["turn_id"]


# --- plain lines by default ---------------------------------------------------------------------


def test_logs_are_plain_lines_unless_asked_for_json(plain_logs):
    assert settings.TALORYS_LOG_JSON is False
    assert PLAIN_FORMAT == "%(asctime)s %(levelname)s %(name)s: %(message)s"  # as it always was

    logging.getLogger("talorys.test").warning("Disk %s is full", "/data")

    (line,) = plain_logs()
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} WARNING talorys.test: Disk /data is full", line
    )


def test_the_settings_pick_json_only_when_asked():
    plain = logging_config(json_lines=False, level="INFO")
    json_config = logging_config(json_lines=True, level="DEBUG")

    assert plain["handlers"]["console"]["formatter"] == "plain"
    assert json_config["handlers"]["console"]["formatter"] == "json"
    assert json_config["root"]["level"] == "DEBUG"
