"""The kinds of item the owner keeps, each registered once (``register_kind``): its model (with
``deleted_at`` and ``objects = LiveManager()``), its content fields, and the services that
delete, restore and apply old content. The bin and the change log work on every kind through
this registry, so the history platform never imports an app above it.

The workspace's kinds register in talorys/workspace/services/ (tasks, notes, projects); memory,
automations and agent register theirs beside their services. ``kind.name`` ("task", "memory") is
the item's name everywhere: the bin, the change log, /api/bin/{kind}/{id}.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from django.db import models
from pydantic import AfterValidator, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue

from talorys.history.models import LiveQuerySet
from talorys.lib.errors import NotFound


@dataclass(frozen=True)
class ItemKind:
    name: str  # "task", as in /api/bin/task/1
    model: type[models.Model]
    fields: tuple[str, ...]  # the content fields a revision keeps
    title: Callable[[Any], str]
    # restore(pk=, actor=, change=): out of the bin, recording the restore; ``change`` is the
    # latest delete, if any.
    restore: Callable[..., Any]
    # delete(pk=, actor=): into the bin, recording the delete.
    delete: Callable[..., Any]
    # apply(pk=, values=, actor=): write old content through the kind's service (which records
    # it). None: the kind keeps no revertable content.
    apply: Callable[..., Any] | None = None


_KINDS: dict[str, ItemKind] = {}


def rows_of(model: type[models.Model]) -> LiveQuerySet:
    """Every row of a kind's model, in the bin or not: each declares
    ``objects = LiveManager()``, which is checked here."""
    rows = model._default_manager.all()
    if not isinstance(rows, LiveQuerySet):
        raise TypeError(f"{model.__name__}.objects must be LiveManager().")
    return rows


def register_kind(kind: ItemKind) -> None:
    _KINDS[kind.name] = kind


def item_kind(name: str) -> ItemKind:
    kind = _KINDS.get(name)
    if kind is None:
        raise NotFound(f"There is no kind {name!r}; kinds are {', '.join(sorted(_KINDS))}.")
    return kind


def item_kinds() -> list[ItemKind]:
    return list(_KINDS.values())


def kind_registered(name: str) -> bool:
    return name in _KINDS


def kind_names() -> list[str]:
    """Every registered kind's name, sorted: what /api/bin/{kind}/{id} accepts."""
    return sorted(_KINDS)


def _json(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        # In UTC: the same instant reads the same whether it came from the caller or the database.
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def item_fields(kind: ItemKind, obj: Any) -> dict[str, Any]:
    """The item's content fields as JSON, the form ``before`` and ``after`` keep."""
    return {name: _json(getattr(obj, name)) for name in kind.fields}


def _known_kind(name: str) -> str:
    if name not in _KINDS:
        raise ValueError(f"There is no kind {name!r}; kinds are {', '.join(kind_names())}.")
    return name


class _RegisteredKinds:
    """Lists the registered kinds in the OpenAPI schema, which is built after every app
    registered its kinds (at the first request for it)."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: Any, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {**handler(schema), "enum": kind_names()}


# A kind's name as the API takes it (/api/bin/{kind}/{id}): checked against the registry when a
# request arrives (unknown: 422, like any bad input), and listed from it in the schema.
ItemKindName = Annotated[str, AfterValidator(_known_kind), _RegisteredKinds]
