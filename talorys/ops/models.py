"""What the operator reads: each setup or upgrade run, the worker's and beat's heartbeats, and
the system jobs beat runs."""

from __future__ import annotations

from django.db import models
from django_celery_beat.models import PeriodicTask


class SetupRun(models.Model):
    """One run of `talorys_setup`: a failed upgrade stays visible here until a later run is ok."""

    class Kind(models.TextChoices):
        SETUP = "setup"
        UPGRADE = "upgrade"

    class Outcome(models.TextChoices):
        OK = "ok"
        FAILED = "failed"

    VERSION_MAX = 50
    MESSAGE_MAX = 4000

    version = models.CharField(max_length=VERSION_MAX)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    # What was done (migrations applied, the backup's file) or the error that stopped it.
    message = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.version} {self.outcome}"


class Heartbeat(models.Model):
    """The last time each background process proved it is alive (one row per name)."""

    class Name(models.TextChoices):
        WORKER = "worker"  # ran the heartbeat task: beat scheduled it, the broker delivered it
        BEAT = "beat"  # sent the heartbeat task

    name = models.CharField(max_length=16, choices=Name.choices, unique=True)
    at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} at {self.at:%Y-%m-%d %H:%M:%S}"


class SystemJob(PeriodicTask):
    """A row of django-celery-beat's table, as the operator's admin shows it: every row there is
    one of the project's fixed jobs (settings.CELERY_BEAT_SCHEDULE, installed by
    talorys/ops/beat.py); the owner's automations are not in it (automations/services/)."""

    class Meta:
        proxy = True
        verbose_name = "system job"
