"""Beat's scheduler (settings.CELERY_BEAT_SCHEDULER): django-celery-beat's database scheduler, with
settings.CELERY_BEAT_SCHEDULE installing each system job once, so the operator's changes in the
admin (talorys/ops/admin.py) last.

At every start django-celery-beat writes each job of the setting over its row (update_or_create):
the schedule goes back to the setting's, so an interval the operator changed would last until
beat restarts. (It leaves ``enabled`` alone, so a paused job stays paused.) Here, at start:

- a job new in the setting is installed as the setting says (a new installation gets them all);
- a job already in the table keeps its schedule, which is the operator's from then on: so
  TALORYS_DISPATCH_SECONDS... set the interval a job is installed with, later changes are made
  in the admin, and a default changed in code reaches existing installations only through a
  data migration that sets it; everything else about the job (its task, its options) follows
  the setting, which is code;
- a job no longer in the setting is removed: its task may be gone from the code too.

Why this is the smallest arrangement that keeps the operator's edits: the library's start
overwrites the schedule, so something must stand between the setting and the table, and this
subclass must exist anyway for beat's record of a run (below). Here that is one substitution in
the mapping the library installs from, with no table of our own: telling an edited schedule
from an untouched one, to let a changed default reach the untouched ones, took a record of the
defaults last installed, and is given up. Creating the rows once in a post_migrate handler
instead would add the handler, a copy of the library's conversion of a setting entry into rows
(interval rows, options into columns), a second setting name so that the stock start installs
nothing, and a second way for a changed task name to reach its row.

And beat's record of a run (its sync, every few minutes) writes only that record: the library
reads the row and saves all of it, which would write back the enabled switch or the interval as
they were before an operator's change committed in between (no option of the library's changes
that; celery/django-celery-beat pull 1038, saving only those columns, is open at 2.9.0: once
released, SystemJobEntry goes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django_celery_beat.models import PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler, ModelEntry

from talorys.ops import services
from talorys.ops.selectors import SCHEDULE_FIELDS


class SystemJobEntry(ModelEntry):
    def save(self) -> None:
        # One UPDATE of beat's own columns, whatever the operator changed since beat read the row.
        PeriodicTask.objects.filter(pk=self.model.pk).update(
            last_run_at=self.model.last_run_at, total_run_count=self.model.total_run_count
        )


class SystemJobScheduler(DatabaseScheduler):
    Entry = SystemJobEntry

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._installed: set[str] = set()  # the jobs the setting names (and celery's own)
        super().__init__(*args, **kwargs)  # sets the schedule up, unless lazy

    def setup_schedule(self) -> None:
        super().setup_schedule()
        for name in services.system_jobs_remove_except(names=self._installed):
            self.schedule.pop(name, None)  # read at the start, before it was removed

    def update_from_dict(self, mapping: Mapping[str, Mapping[str, Any]]) -> None:
        # The library's own write, for the setting and for celery's own jobs: given the schedule
        # the row has, it writes that back, and the setting's task and options with it.
        rows = PeriodicTask.objects.filter(name__in=mapping).select_related(*SCHEDULE_FIELDS)
        kept = {row.name: row.schedule for row in rows}
        super().update_from_dict(
            {
                name: {**job, "schedule": kept.get(name, job["schedule"])}
                for name, job in mapping.items()
            }
        )
        self._installed.update(mapping)
