"""A page of a list read as rows of its output schema's fields, instead of model instances that
ninja then validates one by one.

For each object of a page ninja runs the output schema's validation in Python (its DjangoGetter
reads every attribute through ``__getattr__``), after Django built a model instance for each row:
for 50 tasks that was most of the API's cost over a bare view. For a schema that only
copies fields of the model, that work proves nothing the database has not: the values are the
columns', already of the fields' types. ``SchemaRows`` reads exactly those columns
(``values_list``) and shapes each row as the schema dumps it (same keys, same order, a nested
schema as a dict or None), so the JSON is what ninja would write from the same rows
(tests/lib/test_schema_rows.py compares them byte for byte).

Only schemas that are plain copies can be read so, and that is checked once, when the schema is
given: no resolvers, validators, serializers or computed fields, no constraints, and field types
that come out of the database as the schema would dump them. Anything else raises ConfigError at
import, never a different answer at run time.

Kept only on the lists where it pays for itself: at least 1.5 times as fast as
``@paginate(Pagination)`` on the same view, through the whole stack, on PostgreSQL and on SQLite
(``.venv/bin/python benchmarks/list_rows.py --requests 100``, and with ``--sqlite``; 10,000 rows,
pages of 100, median of 3 runs of wall time per request, ninja / rows). Tasks, with a nested
project, 140.0 / 75.1 ms (1.86x) and 98.4 / 50.8 ms (1.94x); the model's changes, with two JSON
columns, 117.6 / 76.8 ms (1.53x) and 95.2 / 61.2 ms (1.56x). The flat lists saved less (notes
1.38x and 1.08x, projects 1.42x and 1.36x, memories 1.50x and 1.16x, a memory's revisions 1.47x
and 1.28x) and are paged by ninja.

What breaks it: the check reads pydantic's internals (``__pydantic_decorators__`` and its kinds
of decorator, ``model_fields``' alias, validation_alias and metadata) and ninja's
(``_ninja_resolvers``, its own ``_run_root_validator``), and the page is written with ninja's
JSONRenderer. A release that adds a kind of hook, renames one of these or changes how a
Schema dumps would let a row answer differently from the schema, unseen:
tests/lib/test_schema_rows.py checks each of them and compares every list byte for byte
with ninja's own answer, and fails naming the ninja and pydantic versions. The way out is
``@paginate(Pagination)`` on the list, with no other change.
"""

from __future__ import annotations

import datetime as dt
import types
import typing
from typing import Any

from django.db.models import QuerySet
from ninja import Schema
from ninja.errors import ConfigError

# The types a column comes back as exactly what the schema's dump would hold. (Not float: an
# integer column would dump as 3.0 through the schema, 3 from the row.)
_PLAIN_TYPES: frozenset[Any] = frozenset({int, str, bool, dt.datetime, dt.date, dt.time})
_JSON_OBJECT = dict[str, Any]
# ninja's own wrap validator (the DjangoGetter) is on every Schema: the only one allowed.
_NINJA_VALIDATOR = "_run_root_validator"


def _optional(annotation: Any) -> Any:
    """``X | None`` -> X; anything else as it is."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _is_schema(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Schema)


def _check_plain(schema: type[Schema]) -> None:
    decorators = schema.__pydantic_decorators__
    extra = [
        *decorators.field_validators,
        *decorators.field_serializers,
        *decorators.model_serializers,
        *decorators.computed_fields,
        *(name for name in decorators.model_validators if name != _NINJA_VALIDATOR),
    ]
    if extra or getattr(schema, "_ninja_resolvers", None):
        raise ConfigError(f"{schema.__name__} computes values ({extra}): not readable as rows")


# How a row becomes the schema's dict: per key, the index of its column, or (for a nested schema)
# the index of the relation's key (None: the relation is) and the nested keys.
_Shape = list[tuple[str, int, "_Shape | None"]]


def _plan(schema: type[Schema], prefix: str, lookups: list[str]) -> _Shape:
    """``schema``'s shape, appending the columns it reads to ``lookups``."""
    _check_plain(schema)
    shape: _Shape = []
    for name, field in schema.model_fields.items():
        source = field.validation_alias or field.alias or name
        annotation = _optional(field.annotation)
        if not isinstance(source, str) or field.metadata:
            raise ConfigError(f"{schema.__name__}.{name}: not readable as a column")
        lookup = f"{prefix}{source}"
        lookups.append(lookup)
        if _is_schema(annotation):
            shape.append((name, len(lookups) - 1, _plan(annotation, f"{lookup}__", lookups)))
        elif annotation in _PLAIN_TYPES or annotation == _JSON_OBJECT:
            shape.append((name, len(lookups) - 1, None))
        else:
            raise ConfigError(f"{schema.__name__}.{name}: {annotation} is not a column type")
    return shape


def _shaped(shape: _Shape, row: tuple[Any, ...]) -> dict[str, Any]:
    return {
        key: row[index] if nested is None or row[index] is None else _shaped(nested, row)
        for key, index, nested in shape
    }


class SchemaRows:
    """The columns of ``schema``'s fields, read a page at a time and shaped as the schema dumps
    them. A field reads the attribute ninja would read (its alias, else its name); a field whose
    type is a schema reads that relation's fields too (``project__name``), and is None when the
    relation is (its key is null)."""

    def __init__(self, schema: type[Schema]) -> None:
        self.schema = schema
        self.lookups: list[str] = []
        self._shape = _plan(schema, "", self.lookups)

    def page(self, queryset: QuerySet, start: int, stop: int) -> list[dict[str, Any]]:
        """Rows ``start`` to ``stop`` of ``queryset``, in its order: one query."""
        shape = self._shape
        return [_shaped(shape, row) for row in queryset.values_list(*self.lookups)[start:stop]]
