"""Everything that changes the owner's data, one module per kind of data. Edges (API, pages,
tools, tasks) call these.

- ``projects``, ``tasks``, ``notes``: create, change, bin and restore; each declares its kind
  for the bin and the change log (talorys/workspace/history.py) beside its services.
- ``settings``: the owner's settings and time zone.
- ``usage``: the day's request budgets.
- ``bin``: purging the bin of every kind.
- ``common``: time checks and change records the kinds share.

Functions are keyword-only and named ``<entity>_<verb>``. Each runs in a transaction where it
writes more than one row; none of them calls a model provider or any other HTTP service.

This package is the workspace's service surface: other apps call ``services.task_create`` and
the like, so the public functions are importable from here as well as from their module.
"""

from talorys.workspace.services.bin import bin_purge
from talorys.workspace.services.notes import (
    NOTE,
    note_append,
    note_create,
    note_delete,
    note_get,
    note_rename,
    note_update,
)
from talorys.workspace.services.projects import (
    PROJECT,
    project_bin,
    project_create,
    project_delete,
    project_get,
    project_restore,
    project_update,
)
from talorys.workspace.services.settings import (
    PROVIDER_URL_KEYS,
    SESSION_ONLY_SETTINGS,
    SETTINGS_BOUNDS,
    SETTINGS_FIELDS,
    owner_settings_check,
    owner_settings_get,
    owner_settings_update,
    owner_zone,
)
from talorys.workspace.services.tasks import (
    TASK,
    task_complete,
    task_create,
    task_delete,
    task_get,
    task_update,
)
from talorys.workspace.services.usage import usage_record_tokens, usage_remaining, usage_reserve

__all__ = [
    "NOTE",
    "PROJECT",
    "PROVIDER_URL_KEYS",
    "SESSION_ONLY_SETTINGS",
    "SETTINGS_BOUNDS",
    "SETTINGS_FIELDS",
    "TASK",
    "bin_purge",
    "note_append",
    "note_create",
    "note_delete",
    "note_get",
    "note_rename",
    "note_update",
    "owner_settings_check",
    "owner_settings_get",
    "owner_settings_update",
    "owner_zone",
    "project_bin",
    "project_create",
    "project_delete",
    "project_get",
    "project_restore",
    "project_update",
    "task_complete",
    "task_create",
    "task_delete",
    "task_get",
    "task_update",
    "usage_record_tokens",
    "usage_remaining",
    "usage_reserve",
]
