"""The catch-up task and `manage.py talorys_reindex` bring the whole index up to date."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from memory import tasks
from memory.models import RecallEntry
from talorys.workspace import services
from tests.agent.fake_openai import error
from tests.memory.conftest import one_of_each, use_fake_embeddings

pytestmark = pytest.mark.django_db


def test_the_catch_up_task_indexes_everything_and_removes_what_is_gone(local_embeddings):
    items = one_of_each("Skopelos")

    # The local embedder is on by default: each new entry gets its vector.
    assert tasks.reindex_recall() == {"written": 6, "removed": 0, "embedded": 6}
    services.task_delete(task_id=items["task"].pk)
    assert tasks.reindex_recall() == {"written": 0, "removed": 1, "embedded": 0}
    assert not RecallEntry.objects.get(kind="task").live


def test_the_command_reports_what_it_did_and_a_failing_embedder(fake_openai):
    one_of_each("Skopelos")
    use_fake_embeddings(fake_openai)
    fake_openai.script_embeddings(error(500, "down"))
    out, err = io.StringIO(), io.StringIO()

    call_command("talorys_reindex", stdout=out, stderr=err)

    assert "6 written, 0 removed, 0 embedded" in out.getvalue()
    assert "automation: 1" in out.getvalue() and "message: 1" in out.getvalue()
    assert "Embedding stopped" in err.getvalue() and "500" in err.getvalue()

    out = io.StringIO()
    call_command("talorys_reindex", "--full", stdout=out)
    assert "0 written, 0 removed, 6 embedded" in out.getvalue()
    call_command("talorys_reindex", "--full", stdout=(out := io.StringIO()))
    assert "6 embedded" in out.getvalue()  # --full re-embeds even current vectors
