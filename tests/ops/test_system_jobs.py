"""The system jobs beat runs (settings.CELERY_BEAT_SCHEDULE): the operator sees them in the admin,
pauses one or changes its interval, and the change outlasts beat's restart (talorys/ops/beat.py).

Beat is started as `celery beat` starts it: a Celery app configured from the settings as they are
now, and the scheduler class the settings name, made by celery's beat Service. Its writes commit,
as beat's do (the scheduler commits to see other processes' changes): transactional tests.
"""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from celery import Celery
from celery.beat import Service
from django.db import connection, transaction
from django.test import Client
from django.urls import reverse
from django_celery_beat.models import PeriodicTask

from automations.services.crud import automation_create
from talorys.ops.beat import SystemJobScheduler
from talorys.ops.services import system_job_update
from tests.waiting import HANG_SECONDS, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def beat_starts() -> SystemJobScheduler:
    app = Celery("talorys", set_as_current=False)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    scheduler = Service(app=app, scheduler_cls=app.conf.beat_scheduler).get_scheduler()
    assert isinstance(scheduler, SystemJobScheduler)
    return scheduler


def seconds(job: PeriodicTask) -> float:
    assert job.interval is not None
    return dt.timedelta(**{job.interval.period: job.interval.every}).total_seconds()


def an_interval_job(settings) -> str:
    """A job of the setting that runs on an interval (whichever the setting lists first)."""
    return next(
        name
        for name, entry in settings.CELERY_BEAT_SCHEDULE.items()
        if isinstance(entry["schedule"], int | float)
    )


@pytest.fixture
def operator(django_user_model) -> Client:
    user = django_user_model.objects.create_superuser(username="operator", password="x" * 12)
    client = Client()
    client.force_login(user)
    return client


def test_the_admin_lists_every_job_of_the_setting_and_no_automation(operator, settings):
    beat_starts()
    automation_create(
        name="Water the plants", kind="reminder", schedule={"type": "daily", "time": "08:30"}
    )

    page = operator.get(reverse("admin:ops_systemjob_changelist"))

    assert page.status_code == 200
    shown = {job.name for job in page.context["cl"].result_list}
    assert set(settings.CELERY_BEAT_SCHEDULE) <= shown
    assert "Water the plants" not in page.content.decode()
    assert b"last run" in page.content.lower()


def test_a_change_page_shows_the_job_and_its_default(operator, settings):
    beat_starts()
    job = PeriodicTask.objects.get(name=an_interval_job(settings))
    default = str(job.interval)
    job = system_job_update(job_id=job.pk, every_seconds=4321)

    page = operator.get(reverse("admin:ops_systemjob_change", args=[job.pk]))

    assert page.status_code == 200
    assert page.context["adminform"].form["every_seconds"].initial == 4321
    assert default.encode() in page.content  # the setting's default, beside it


def test_a_pause_and_an_interval_set_in_the_admin_outlast_a_restart(operator, settings):
    beat_starts()
    name = an_interval_job(settings)
    job = PeriodicTask.objects.get(name=name)

    response = operator.post(
        reverse("admin:ops_systemjob_change", args=[job.pk]), {"every_seconds": "4321"}
    )  # "enabled" left out: the box unticked

    assert response.status_code == 302, response.content[:2000]
    restarted = beat_starts()
    job.refresh_from_db()
    assert (job.enabled, seconds(job)) == (False, 4321)
    assert name not in restarted.schedule

    system_job_update(job_id=job.pk, enabled=True)
    resumed = beat_starts()
    assert seconds(PeriodicTask.objects.get(name=name)) == 4321
    assert resumed.schedule[name].schedule.run_every == dt.timedelta(seconds=4321)


def test_the_list_s_switch_pauses_a_job(operator, settings):
    beat_starts()
    jobs = list(PeriodicTask.objects.order_by("name"))
    form = {
        "form-TOTAL_FORMS": str(len(jobs)),
        "form-INITIAL_FORMS": str(len(jobs)),
        "_save": "Save",
        **{f"form-{i}-id": str(job.pk) for i, job in enumerate(jobs)},
        **{f"form-{i}-enabled": "on" for i in range(1, len(jobs))},  # the first one unticked
    }

    response = operator.post(reverse("admin:ops_systemjob_changelist"), form)

    assert response.status_code == 302, response.content[:2000]
    assert list(PeriodicTask.objects.filter(enabled=False)) == [jobs[0]]
    beat_starts()
    assert list(PeriodicTask.objects.filter(enabled=False)) == [jobs[0]]


def test_an_installed_job_keeps_its_schedule_and_follows_the_rest_of_the_setting(settings):
    beat_starts()
    tuned, untouched = [
        name
        for name, entry in settings.CELERY_BEAT_SCHEDULE.items()
        if isinstance(entry["schedule"], int | float)
    ][:2]
    installed = seconds(PeriodicTask.objects.get(name=untouched))
    system_job_update(job_id=PeriodicTask.objects.get(name=tuned).pk, every_seconds=4321)
    settings.CELERY_BEAT_SCHEDULE = {
        **settings.CELERY_BEAT_SCHEDULE,
        tuned: {**settings.CELERY_BEAT_SCHEDULE[tuned], "schedule": 77.0},
        untouched: {
            **settings.CELERY_BEAT_SCHEDULE[untouched],
            "task": "talorys.ops.tasks.heartbeat",
            "schedule": 77.0,
            "options": {"expire_seconds": 9},
        },
    }  # as a changed environment setting (TALORYS_DISPATCH_SECONDS...) and code would

    scheduler = beat_starts()

    assert seconds(PeriodicTask.objects.get(name=tuned)) == 4321
    job = PeriodicTask.objects.get(name=untouched)
    assert (seconds(job), job.task, job.expire_seconds) == (
        installed,
        "talorys.ops.tasks.heartbeat",
        9,
    )
    assert scheduler.schedule[untouched].schedule.run_every == dt.timedelta(seconds=installed)


def test_a_job_new_in_the_setting_appears_and_a_dropped_one_goes(operator, settings):
    beat_starts()
    dropped, *kept = settings.CELERY_BEAT_SCHEDULE
    settings.CELERY_BEAT_SCHEDULE = {
        **{name: settings.CELERY_BEAT_SCHEDULE[name] for name in kept},
        "ops-new-job": {"task": "talorys.ops.tasks.heartbeat", "schedule": 900.0},
    }

    scheduler = beat_starts()

    assert "ops-new-job" in scheduler.schedule
    assert dropped not in scheduler.schedule
    assert not PeriodicTask.objects.filter(name=dropped).exists()
    page = operator.get(reverse("admin:ops_systemjob_changelist")).content.decode()
    assert "ops-new-job" in page
    assert dropped not in page


def test_expire_seconds_reaches_the_task_it_sends(settings):
    scheduler = beat_starts()
    expiring = {
        name: entry["options"]["expire_seconds"]
        for name, entry in settings.CELERY_BEAT_SCHEDULE.items()
        if "expire_seconds" in entry.get("options", {})
    }

    assert expiring  # the dispatcher's and the heartbeat's, at least
    for name, expire_seconds in expiring.items():
        assert PeriodicTask.objects.get(name=name).expire_seconds == expire_seconds
        assert scheduler.schedule[name].options["expires"] == expire_seconds


def test_a_calendar_job_s_interval_cannot_be_set(operator):
    beat_starts()
    calendar = PeriodicTask.objects.filter(crontab__isnull=False).first()
    if calendar is None:
        pytest.skip("no calendar job installed (celery's clean-up needs result_expires)")

    response = operator.post(
        reverse("admin:ops_systemjob_change", args=[calendar.pk]),
        {"enabled": "on", "every_seconds": "60"},
    )

    assert response.status_code == 302
    calendar.refresh_from_db()
    assert (calendar.interval, calendar.crontab is not None) == (None, True)


def _waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # else the transaction's first snapshot
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def test_beat_s_record_of_a_run_keeps_a_pause_made_meanwhile(needs_postgres, settings):
    """Beat saves a job's last run a while after it read the row: a pause committed in between
    stays (PostgreSQL, beat in a thread, its write held on the operator's row lock)."""
    name = an_interval_job(settings)
    scheduler = beat_starts()
    sent = scheduler.reserve(scheduler.schedule[name])  # beat sends the job
    job_id = PeriodicTask.objects.get(name=name).pk

    def beat_records_the_run() -> None:
        try:
            sent.save()  # what beat's periodic sync does with the jobs it sent
        finally:
            connection.close()

    beat = threading.Thread(target=beat_records_the_run)
    with transaction.atomic():
        system_job_update(job_id=job_id, enabled=False)  # its lock held until the commit
        beat.start()
        wait_for(lambda: _waiting_on_locks() >= 1, "beat's write to wait on the lock")
    beat.join(timeout=HANG_SECONDS)

    job = PeriodicTask.objects.get(pk=job_id)
    assert job.enabled is False
    assert job.total_run_count == 1  # and beat's record of the run is kept too


def test_health_judges_the_heartbeat_by_the_interval_the_job_runs_at(settings):
    from talorys.ops.selectors import HEARTBEAT_JOB, heartbeat_limit

    assert heartbeat_limit() == dt.timedelta(seconds=3 * settings.TALORYS_HEARTBEAT_SECONDS)
    beat_starts()
    job = PeriodicTask.objects.get(name=HEARTBEAT_JOB)
    system_job_update(job_id=job.pk, enabled=True, every_seconds=120)

    # Slowed in the admin: a beat two minutes old is fresh, not stale.
    assert heartbeat_limit() == dt.timedelta(seconds=360)
