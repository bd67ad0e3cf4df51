"""Fixtures for the chat turn: a real fake model server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent.fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started OpenAI-compatible server on 127.0.0.1: ``.base_url`` (…/v1), ``.script(...)``,
    ``.requests`` (every JSON body received) and ``.headers``."""
    server = FakeOpenAI().start()
    yield server
    server.stop()
