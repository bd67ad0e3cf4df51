"""What the migrations that move a model between apps share: its content type follows it.

A model that moves keeps its table (db_table) and its rows; the admin's log entries and the
permissions point at its content type, which Django keys by app label, so the content type is
relabelled in the same migration (both ways, so the migration reverses).

The models that left the talorys app for accounts, workspace and notifications, and later for
history and owner, keep their ``talorys_`` tables this way, so an existing database upgrades in
place: tests/ops/test_upgrade_from_18cfbd7.py proves it from an older tree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Migrate = Callable[[Any, Any], None]


def _relabel(apps: Any, schema_editor: Any, *, old: str, new: str, models: list[str]) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    rows = content_type.objects.using(schema_editor.connection.alias)
    for model in models:
        # A row under the new label can only exist if it was made by hand: keep it.
        if not rows.filter(app_label=new, model=model).exists():
            rows.filter(app_label=old, model=model).update(app_label=new)


def relabel_content_types(old: str, new: str, models: list[str]) -> tuple[Migrate, Migrate]:
    """The forward and backward functions of a RunPython that moves ``models``' content types
    from app label ``old`` to ``new``."""

    def forward(apps: Any, schema_editor: Any) -> None:
        _relabel(apps, schema_editor, old=old, new=new, models=models)

    def backward(apps: Any, schema_editor: Any) -> None:
        _relabel(apps, schema_editor, old=new, new=old, models=models)

    return forward, backward
