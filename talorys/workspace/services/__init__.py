"""Everything that changes the owner's projects, tasks and notes, one module per kind. Edges
(API, pages, tools) call these.

- ``projects``, ``tasks``, ``notes``: create, change, delete (to the bin) and restore; each
  declares its kind for the bin and the change log (talorys/history/kinds.py) beside its
  services.
- ``common``: time checks, field checks, and the create and the edit the kinds share.

Functions are keyword-only and named ``<entity>_<verb>``. Each runs in a transaction where it
writes more than one row; none of them calls a model provider or any other HTTP service.

This package is the workspace's service surface: other apps call ``services.task_create`` and
the like, so the public functions are importable from here as well as from their module.
"""

from talorys.workspace.services.notes import (
    NOTE,
    note_append,
    note_create,
    note_delete,
    note_rename,
    note_restore,
    note_task_tick,
    note_update,
)
from talorys.workspace.services.projects import (
    PROJECT,
    project_create,
    project_delete,
    project_restore,
    project_update,
)
from talorys.workspace.services.tasks import (
    TASK,
    task_complete,
    task_create,
    task_create_in_words,
    task_delete,
    task_restore,
    task_update,
)

__all__ = [
    "NOTE",
    "PROJECT",
    "TASK",
    "note_append",
    "note_create",
    "note_delete",
    "note_rename",
    "note_restore",
    "note_task_tick",
    "note_update",
    "project_create",
    "project_delete",
    "project_restore",
    "project_update",
    "task_complete",
    "task_create",
    "task_create_in_words",
    "task_delete",
    "task_restore",
    "task_update",
]
