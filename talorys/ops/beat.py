"""Beat's scheduler (settings.CELERY_BEAT_SCHEDULER): django-celery-beat's database scheduler, with
settings.CELERY_BEAT_SCHEDULE as the system jobs' defaults, so the operator's changes in the admin
(talorys/ops/admin.py) last.

At every start django-celery-beat writes each job of the setting over its row (update_or_create):
the schedule goes back to the setting's, so an interval the operator changed would last until
beat restarts. (It leaves ``enabled`` alone, so a paused job stays paused; options such as
``expire_seconds`` go to the row's own column, and beat sends them as the task's ``expires``.)
Here, at start:

- a job new in the setting is installed as the setting says;
- a job whose schedule the operator changed keeps it; everything else about it (its task, its
  options) follows the setting, which is code;
- a job whose schedule the operator left alone follows the setting's, which an environment
  setting such as TALORYS_DISPATCH_SECONDS may have changed;
- a job no longer in the setting is removed: its task may be gone from the code too.

SystemJobDefault remembers the schedule the setting installed last, which tells the two apart.

And beat's record of a run (its sync, every few minutes) writes only that record: the library
reads the row and saves all of it, which would write back the enabled switch or the interval as
they were before an operator's change committed in between.
The library's own method for that write, ``update_from_dict``, is the one overridden: it is the
one setup_schedule calls for the setting and for celery's built-in jobs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django_celery_beat.models import PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler, ModelEntry

from talorys.ops import selectors, services


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
        defaults = {name: self._text(entry["schedule"]) for name, entry in mapping.items()}
        tuned = selectors.system_jobs_tuned(defaults=defaults)
        super().update_from_dict(
            {
                name: {**entry, "schedule": tuned[name].schedule} if name in tuned else entry
                for name, entry in mapping.items()
            }
        )
        services.system_job_defaults_record(defaults=defaults)
        self._installed.update(mapping)

    def _text(self, schedule: Any) -> str:
        """A schedule as its row reads ("every 30 seconds"), the row made as the library does."""
        row, _ = self.Entry.to_model_schedule(schedule)
        row.refresh_from_db()  # a row made just now holds the float it was given ("30.0")
        return str(row)
