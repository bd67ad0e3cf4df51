"""Every paged list answers byte for byte what ninja writes from model instances validated by
its schema: for the lists read as rows (talorys/web/schema_rows.py, ``paginate_rows``: tasks and
changes) that proves the rows right, for those ninja pages it holds their JSON as the API's
clients read it. A schema that computes anything is refused when it is given; and a page of
tasks costs the same queries for 5 tasks as for 60. SchemaRows reads pydantic's and ninja's internals: the last tests check them, and
every failure here names the ninja and pydantic versions."""

from __future__ import annotations

import dataclasses
import datetime as dt
import inspect
from collections.abc import Callable
from importlib.metadata import version as package_version
from typing import Any

import pytest
from django.db import connection
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext
from ninja import Field, Schema
from ninja.errors import ConfigError
from ninja.pagination import LimitOffsetPagination
from ninja.renderers import JSONRenderer
from pydantic import computed_field, field_validator

from memory import selectors as memory_selectors
from memory import services as memory_services
from memory.models import Memory
from memory.schemas import MemoryOut, MemoryRevisionOut
from talorys.history.changes import change_revert
from talorys.history.schemas import ChangeOut
from talorys.history.selectors import change_list
from talorys.lib.actors import Actor
from talorys.web.pagination import Pagination
from talorys.web.schema_rows import SchemaRows
from talorys.workspace import selectors, services
from talorys.workspace.models import Task
from talorys.workspace.schemas import NoteOut, ProjectOut, TaskOut

MODEL = Actor(source="chat", conversation_id=7, message_id=11)


@pytest.fixture
def world(db) -> dict[str, Any]:
    home = services.project_create(name="Home", description="The flat")
    services.task_create(title="No project, no date")
    services.task_create(
        title="Whole second",  # no microseconds: the JSON writes none
        details="Both dates",
        priority=Task.Priority.HIGH,
        due_at=dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        project_id=home.pk,
    )
    done = services.task_create(
        title="Done", due_at=dt.datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC)
    )
    services.task_update(task_id=done.pk, status="done", project_id=home.pk, actor=MODEL)
    services.project_create(name="Empty")
    note = services.note_create(title="Minutes", content="Said and done")
    services.note_update(note_id=note.pk, content="Said, not done", actor=MODEL)
    older = memory_services.memory_create_unchecked(text="Ana lives in Lisbon")
    newer = memory_services.memory_create_unchecked(
        text="Ana lives in Porto", valid_from=dt.date(2030, 1, 1), valid_to=dt.date(2031, 1, 1)
    )
    memory_services.memory_supersede(memory_id=older.pk, by_id=newer.pk, source="chat")
    memory_services.memory_update_unchecked(
        memory_id=newer.pk, text="Ana moved to Porto", actor=MODEL
    )
    Memory.objects.filter(pk=newer.pk).update(conflicts_with=older)
    note_change = change_list(kind="note", object_id=note.pk).first()
    change_revert(change_id=note_change.pk, actor=MODEL)  # reverted, and a revert
    return {"memory": newer}


ALL = slice(None)
# url -> the schema it lists, the rows ninja validated (the view's queryset), and the page of them
CASES: dict[str, tuple[type[Schema], Callable[[dict[str, Any]], QuerySet], slice]] = {
    "/api/tasks?limit=50": (TaskOut, lambda w: selectors.task_list(), ALL),
    "/api/tasks?limit=2&offset=1": (TaskOut, lambda w: selectors.task_list(), slice(1, 3)),
    "/api/tasks?status=done": (TaskOut, lambda w: selectors.task_list(status="done"), ALL),
    "/api/tasks?offset=40": (TaskOut, lambda w: selectors.task_list(), slice(40, None)),
    "/api/projects": (ProjectOut, lambda w: selectors.project_list(), ALL),
    "/api/notes": (NoteOut, lambda w: selectors.note_list(), ALL),
    "/api/changes": (ChangeOut, lambda w: change_list(), ALL),
    "/api/memories": (MemoryOut, lambda w: memory_selectors.memory_list(), ALL),
    "/api/memories?superseded=true": (
        MemoryOut,
        lambda w: memory_selectors.memory_list(superseded=True),
        ALL,
    ),
    "/api/memories/{memory}/history": (
        MemoryRevisionOut,
        lambda w: memory_selectors.memory_history(memory_id=w["memory"].pk),
        ALL,
    ),
}


def as_ninja_wrote_it(schema: type[Schema], objects: QuerySet, count: int) -> bytes:
    """The answer of ``@paginate(Pagination)``: each object validated by the schema, dumped."""
    page = {"items": [schema.model_validate(obj).model_dump() for obj in objects], "count": count}
    return JSONRenderer().render(None, page, response_status=200).encode()


@pytest.mark.parametrize("url", CASES)
def test_a_paged_list_answers_what_the_schema_would(api, world, url):
    schema, rows, page = CASES[url]
    response = api.get(url.format(memory=world["memory"].pk))
    assert response.status_code == 200, response.content[:300]
    expected = as_ninja_wrote_it(schema, rows(world)[page], rows(world).count())
    assert response.content == expected, _upgrade_broke(f"{url} differs from ninja's answer")
    # Not a list that happens to be empty, and written as ninja writes every answer.
    assert page.start == 40 or response.json()["items"]
    assert response["Content-Type"] == api.get("/api/bin")["Content-Type"]


def test_a_page_of_tasks_runs_the_same_queries_for_5_tasks_as_for_60(api, db):
    def read() -> tuple[int, list[dict[str, Any]]]:
        with CaptureQueriesContext(connection) as queries:
            response = api.get("/api/tasks?limit=50")
        assert response.status_code == 200
        return len(queries), response.json()["items"]

    project = services.project_create(name="Home")
    for n in range(60):
        if n == 5:
            few, few_items = read()
        services.task_create(title=f"Task {n}", project_id=project.pk if n % 2 else None)
    many, many_items = read()
    assert (len(few_items), len(many_items)) == (5, 50)
    assert many == few
    assert {item["project"]["name"] for item in many_items if item["project"]} == {"Home"}


class Ref(Schema):
    id: int


class Resolved(Schema):
    id: int
    name: str

    @staticmethod
    def resolve_name(obj: Any) -> str:
        return "computed"


class Validated(Schema):
    id: int

    @field_validator("id")
    @classmethod
    def _double(cls, value: int) -> int:
        return value * 2


class Computed(Schema):
    id: int

    @computed_field
    def twice(self) -> int:
        return self.id * 2


class Floating(Schema):
    score: float


class Listed(Schema):
    refs: list[Ref]


class Bounded(Schema):
    id: int = Field(ge=1)


@pytest.mark.parametrize(
    "schema", [Resolved, Validated, Computed, Floating, Listed, Bounded], ids=lambda s: s.__name__
)
def test_a_schema_that_computes_or_converts_is_refused_when_given(schema):
    with pytest.raises(ConfigError):
        SchemaRows(schema)


def test_a_nested_schema_reads_the_relation_columns_after_its_key():
    class Task(Schema):
        id: int
        project: Ref | None
        memo: str = Field(alias="details")

    assert SchemaRows(Task).lookups == ["id", "project", "project__id", "details"]


# --- what SchemaRows relies on in ninja and pydantic (run on every upgrade) ---------------------

VERSIONS = f"django-ninja {package_version('django-ninja')}, pydantic {package_version('pydantic')}"


# The kinds of decorator pydantic keeps on a model (validators and root_validators are v1's).
KINDS = (
    "validators",
    "field_validators",
    "root_validators",
    "field_serializers",
    "model_serializers",
    "model_validators",
    "computed_fields",
)


def _upgrade_broke(what: str) -> str:
    return (
        f"{VERSIONS}: {what}; talorys/web/schema_rows.py checks and shapes schemas with it "
        "(see its docstring): fix it, or list with @paginate(Pagination) instead"
    )


def test_ninja_and_pydantic_still_expose_what_schema_rows_reads():
    decorators = TaskOut.__pydantic_decorators__
    for kind in KINDS:
        assert isinstance(getattr(decorators, kind, None), dict), _upgrade_broke(f"no {kind}")
    # A new kind of hook would go unchecked by SchemaRows and change the answer unseen.
    kinds = [field.name for field in dataclasses.fields(decorators)]
    assert set(kinds) <= set(KINDS), _upgrade_broke(f"new kinds of decorator: {kinds}")
    assert list(decorators.model_validators) == ["_run_root_validator"], _upgrade_broke(
        f"a Schema's own validators are now {list(decorators.model_validators)}"
    )
    # A resolver is how ninja computes a field: unseen, a row would answer the column instead.
    assert set(getattr(Resolved, "_ninja_resolvers", {})) == {"name"}, _upgrade_broke(
        "resolve_<field> methods are no longer in Schema._ninja_resolvers"
    )
    field = TaskOut.model_fields["project"]
    assert (field.alias, field.validation_alias, field.metadata) == (None, None, []), (
        _upgrade_broke("FieldInfo's alias, validation_alias or metadata changed")
    )


def test_ninja_still_answers_a_paged_list_as_paginate_rows_writes_it():
    parameters = inspect.signature(JSONRenderer.render).parameters
    assert list(parameters) == ["self", "request", "data", "response_status"], _upgrade_broke(
        f"JSONRenderer.render{inspect.signature(JSONRenderer.render)}"
    )
    assert Pagination.items_attribute == "items", _upgrade_broke("the page's items moved")
    paginate_queryset = inspect.signature(LimitOffsetPagination.paginate_queryset)
    assert list(paginate_queryset.parameters)[:4] == [
        "self",
        "queryset",
        "pagination",
        "request",
    ], _upgrade_broke(f"LimitOffsetPagination.paginate_queryset{paginate_queryset}")
