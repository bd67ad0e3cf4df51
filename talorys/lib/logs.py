"""Structured logs: the request id and the turn id on every record, and a JSON formatter.

The ids live in context variables, so they follow the work wherever it goes: into tasks made by
the request or the turn (``asyncio.create_task`` copies the context) and into the threads that
``sync_to_async`` runs ORM code on (asgiref copies it too). ``ContextFilter`` copies them onto
each record as it reaches the handler, so a line logged deep in a tool carries both ids.

``logging_config`` builds settings.LOGGING: plain lines by default (the format the project always
had), one JSON object per line with ``TALORYS_LOG_JSON=1``. Imported by the settings, so only the
standard library here.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import AsyncGenerator, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

request_id: ContextVar[str] = ContextVar("talorys_request_id", default="")
turn_id: ContextVar[str] = ContextVar("talorys_turn_id", default="")

PLAIN_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# Attributes every LogRecord has; anything else on a record came from ``extra=`` and is kept.
_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class ContextFilter(logging.Filter):
    """Adds ``request_id`` and ``turn_id`` (empty outside a request or a turn) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        record.turn_id = turn_id.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, the ids when set,
    any ``extra=`` fields, and the traceback as ``exc``. A message with newlines stays one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_") and value not in ("", None):
                line[key] = value
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def logging_config(*, json_lines: bool, level: str) -> dict[str, Any]:
    """settings.LOGGING: everything to the console (stderr), the context filter on the handler so
    that records propagated from any logger get the ids."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": ContextFilter}},
        "formatters": {"plain": {"format": PLAIN_FORMAT}, "json": {"()": JsonFormatter}},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "json" if json_lines else "plain",
                "filters": ["context"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {"django.db.backends": {"level": "INFO"}},
    }


@contextmanager
def _bound(var: ContextVar[str], value: str) -> Iterator[None]:
    token = var.set(value)
    try:
        yield
    finally:
        # ValueError: left from another context (a generator closed by the event loop's
        # finalizer task), which never had our value, so there is nothing to undo.
        with suppress(ValueError):
            var.reset(token)


def turn_scope(value: str) -> AbstractContextManager[None]:
    """``with turn_scope(id):`` the block's records carry this turn id."""
    return _bound(turn_id, value)


async def with_turn_id(value: str, events: AsyncGenerator[T, None]) -> AsyncGenerator[T, None]:
    """``events``, each step of it run with this turn id, its closing too.

    A context variable set inside an async generator would not do: each ``anext`` may run in a
    task of its own (the SSE stream awaits every event in a new task), so a value set in one
    step is gone in the next. Setting it around every step holds whoever drives the generator.
    """
    try:
        while True:
            with turn_scope(value):
                try:
                    event = await anext(events)
                except StopAsyncIteration:
                    return
            yield event
    finally:
        with turn_scope(value):
            await events.aclose()
