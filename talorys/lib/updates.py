"""One way for a service to write an update: ``model_update``, after HackSoft's styleguide.

An update service takes typed arguments (a ``TypedDict`` of the fields it may change), cleans
each value the caller sent with its own checks (they raise ``ValidationFailed`` with the words
the owner reads), and hands the result here, which sets the allowed fields and saves only them.
Saving with ``update_fields`` keeps a write to a locked row from rewriting columns it never
meant to touch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from django.db import models

M = TypeVar("M", bound=models.Model)


def _current(instance: models.Model, name: str, value: Any) -> tuple[Any, Any]:
    """The field's value now and the one it would get, compared by id for a relation (so no
    query fetches the related row only to compare it)."""
    field = instance._meta.get_field(name)
    if isinstance(field, models.ForeignKey):
        new = value.pk if isinstance(value, models.Model) else value
        return getattr(instance, field.attname), new
    return getattr(instance, name), value


def model_update(*, instance: M, fields: Iterable[str], data: Mapping[str, Any]) -> tuple[M, bool]:
    """Set each of ``fields`` that ``data`` holds on ``instance`` and save the ones that
    changed, with the model's ``auto_now`` fields; a key of ``data`` outside ``fields`` is
    ignored. Returns the instance and whether anything was saved.

    The values must be cleaned already: this runs no validation of its own. Call it with the
    row locked (``select_for_update``) when the update reads the row to decide."""
    changed = []
    for name in fields:
        if name not in data:
            continue
        now, new = _current(instance, name, data[name])
        if now != new:
            setattr(instance, name, data[name])
            changed.append(name)
    if not changed:
        return instance, False
    stamps = [
        field.name
        for field in instance._meta.concrete_fields
        if getattr(field, "auto_now", False) and field.name not in changed
    ]
    instance.save(update_fields=[*changed, *stamps])
    return instance, True
