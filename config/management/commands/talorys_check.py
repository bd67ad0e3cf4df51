"""`manage.py talorys_check`: the health report (talorys/ops/health.py) for an operator.

One line a check, each with what to do when it is not well; exit 1 when Talorys is degraded.
`--service worker|beat` checks that one heartbeat only, for a container's health check.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from talorys.ops.health import HealthReport, health_report
from talorys.ops.selectors import HeartbeatState, heartbeat_limit, heartbeat_states

HINTS = {
    "database": "check DATABASE_URL and that the database server is running",
    "broker": "check REDIS_URL and that Redis is running",
    "channel_layer": "live pages need Redis: check REDIS_URL and that Redis is running",
    "worker": "start the worker (`celery -A config worker`); it runs the heartbeat beat sends, "
    "so start beat too",
    "beat": "start beat (`celery -A config beat`)",
    "embedder": "start the embedder (`python manage.py talorys_embedder`; talorys_run starts it): "
    "recall is keyword only meanwhile",
    "setup": "run `python manage.py talorys_setup` again (with --upgrade for an upgrade)",
}


class Command(BaseCommand):
    help = (
        "Check the database, Redis, the channel layer, the worker, beat and the embedder; "
        "exit 1 if degraded."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--service",
            choices=["worker", "beat"],
            help="Only this background process's heartbeat (exit 1 unless it is fresh).",
        )

    def handle(self, *args, service: str | None, **options):
        if service:
            state = heartbeat_states()[service]
            self.stdout.write(f"{service}: {describe(state)}")
            if state.status != "ok":
                raise CommandError(f"{service} is {state.status}: {HINTS[service]}.")
            return
        report = health_report()
        for line in report_lines(report):
            self.stdout.write(line)
        if report.status != "ok":
            raise CommandError(f"Talorys is degraded: {', '.join(report.problems)}.")


def report_lines(report: HealthReport) -> list[str]:
    last = report.last_setup
    setup = "never run"
    if last is not None:
        setup = f"{last.outcome}: {last.kind} of {last.version} at {last.finished_at:%Y-%m-%d %H:%M} UTC"
    rows = [
        ("database", report.database),
        ("broker", report.broker),
        ("channel_layer", report.channel_layer),
        ("worker", describe(report.worker)),
        ("beat", describe(report.beat)),
        (
            "embedder",
            report.embedder + (f" ({report.embedder_error})" if report.embedder_error else ""),
        ),
        ("setup", setup),
    ]
    lines = [f"Talorys {report.version}: {report.status}"]
    for name, shown in rows:
        hint = f"  -> {HINTS[name]}" if name in report.problems else ""
        lines.append(f"  {name.replace('_', ' '):<14}{shown}{hint}")
    return lines


def describe(state: HeartbeatState) -> str:
    if state.at is None:
        return "unknown (no heartbeat yet)"
    ago = int((timezone.now() - state.at).total_seconds())
    limit = int(heartbeat_limit().total_seconds())
    return f"{state.status} (last heartbeat {ago} s ago; stale after {limit} s)"
