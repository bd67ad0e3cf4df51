"""`manage.py talorys_setup`: the owner account (from the environment or a generated password),
the checks before anything changes, the record of each run, upgrades with a backup first."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command, get_commands
from django.db import OperationalError, connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import Client

from talorys.notifications.push import vapid_key_path
from talorys.ops.models import SetupRun
from talorys.ops.selectors import app_version
from talorys.owner.models import OwnerSettings
from tests.conftest import ApiClient
from tests.ops import upgrade_probe

PASSWORD = "a long and unusual passphrase"


def setup(*args: str) -> str:
    out = io.StringIO()
    call_command("talorys_setup", "--noinput", *args, stdout=out)
    return out.getvalue()


def can_log_in(username: str, password: str) -> bool:
    return ApiClient(Client()).login(username, password).status_code == 200


@pytest.fixture
def env(monkeypatch):
    monkeypatch.delenv("TALORYS_OWNER_USERNAME", raising=False)
    monkeypatch.delenv("TALORYS_OWNER_PASSWORD", raising=False)
    return monkeypatch


def test_creates_the_owner_from_the_environment(db, env):
    env.setenv("TALORYS_OWNER_USERNAME", "ada")
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)

    out = setup()

    assert "Created the owner account 'ada'" in out
    assert PASSWORD not in out  # a password the operator chose is not echoed
    owner = get_user_model().objects.get(username="ada")
    assert owner.is_superuser and owner.is_staff  # the owner also operates /admin/
    assert can_log_in("ada", PASSWORD)


def test_generates_a_password_and_prints_it_once(db, env):
    out = setup()

    printed = re.search(r"OWNER PASSWORD \(shown once\): (\S+)", out)
    assert printed, out
    assert can_log_in("owner", printed[1])

    again = setup()
    assert "exists" in again
    assert "OWNER PASSWORD" not in again
    assert can_log_in("owner", printed[1])  # the second run kept the first password


def test_running_twice_keeps_the_first_password(db, env):
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)
    setup()
    env.setenv("TALORYS_OWNER_PASSWORD", "another long passphrase")
    setup()
    assert can_log_in("owner", PASSWORD)
    assert not can_log_in("owner", "another long passphrase")
    assert get_user_model().objects.count() == 1


def test_reset_password_changes_it_and_ends_every_session(db, env):
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)
    setup()
    browser = ApiClient(Client(enforce_csrf_checks=True))
    assert browser.login("owner", PASSWORD).status_code == 200

    env.setenv("TALORYS_OWNER_PASSWORD", "the replacement passphrase")
    out = setup("--reset-password")

    assert "New password set for 'owner'" in out
    assert browser.get("/api/tasks").status_code == 401
    assert Session.objects.count() == 0
    assert can_log_in("owner", "the replacement passphrase")
    assert not can_log_in("owner", PASSWORD)


def test_reset_password_without_one_generates_and_prints_it(db, env):
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)
    setup()
    env.delenv("TALORYS_OWNER_PASSWORD")

    printed = re.search(r"OWNER PASSWORD \(shown once\): (\S+)", setup("--reset-password"))

    assert printed
    assert can_log_in("owner", printed[1])
    assert not can_log_in("owner", PASSWORD)


@pytest.mark.parametrize("weak", ["short", "password123", "1234567890"])
def test_a_weak_password_is_refused_and_nothing_is_created(db, env, weak):
    env.setenv("TALORYS_OWNER_PASSWORD", weak)
    with pytest.raises(CommandError, match="Password refused"):
        setup()
    assert not get_user_model().objects.exists()


def test_a_weak_reset_password_keeps_the_old_one(db, env):
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)
    setup()
    browser = ApiClient(Client())
    browser.login("owner", PASSWORD)
    env.setenv("TALORYS_OWNER_PASSWORD", "short")

    with pytest.raises(CommandError, match="Password refused"):
        setup("--reset-password")

    assert can_log_in("owner", PASSWORD)
    assert browser.get("/api/tasks").status_code == 200


# --- what each run checks, records and changes -------------------------------------------------


def installation() -> dict:
    """Everything a setup run may change."""
    key = vapid_key_path()
    return {
        "users": list(get_user_model().objects.values_list("username", "password", "is_staff")),
        "migrations": set(MigrationRecorder(connection).applied_migrations()),
        "vapid_key": key.read_bytes() if key.exists() else None,
        "owner_settings": list(OwnerSettings.objects.values()),
    }


def runs() -> list[tuple[str, str, str]]:
    return [(r.kind, r.outcome, r.version) for r in SetupRun.objects.order_by("started_at", "id")]


def test_each_run_is_recorded_with_the_version_and_what_it_did(db, env):
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)

    out = setup()

    run = SetupRun.objects.get()
    assert (run.kind, run.outcome) == ("setup", "ok")
    assert run.version == app_version() == "0.1.0"  # pyproject.toml's
    assert run.started_at <= run.finished_at
    assert "Created the owner account 'owner'." in run.message
    assert PASSWORD not in run.message
    assert f"Talorys {app_version()}: setup done." in out


def test_running_setup_twice_changes_nothing_the_second_time(db, env):
    first = setup()
    before = installation()

    second = setup()

    assert "Nothing to change: the installation is up to date." in second
    assert "OWNER PASSWORD" in first and "OWNER PASSWORD" not in second
    assert installation() == before
    assert runs() == [("setup", "ok", app_version())] * 2


def test_no_database_says_what_to_fix_and_changes_nothing(db, env, monkeypatch):
    before = installation()
    with monkeypatch.context() as patched:

        def refuse():
            raise OperationalError("connection refused")

        # Django's connection, not ours: as if the database server were down.
        patched.setattr(connection, "ensure_connection", refuse)
        with pytest.raises(CommandError) as failed:
            setup()

    message = str(failed.value)
    assert "Cannot connect to the database" in message
    assert "connection refused" in message and "DATABASE_URL" in message
    assert message.endswith("Nothing was changed.")
    assert installation() == before
    assert runs() == []  # nowhere to record it


def test_no_redis_says_what_to_fix_and_changes_nothing(db, env, settings, unused_tcp_port):
    settings.REDIS_URL = f"redis://127.0.0.1:{unused_tcp_port}/0"
    before = installation()

    with pytest.raises(CommandError) as failed:
        setup()

    message = str(failed.value)
    assert f"Redis at 127.0.0.1:{unused_tcp_port} (REDIS_URL) does not answer" in message
    assert message.endswith("Nothing was changed.")
    assert installation() == before
    assert runs() == [("setup", "failed", app_version())]


def test_a_refused_password_is_recorded_as_a_failed_run(db, env):
    env.setenv("TALORYS_OWNER_PASSWORD", "short")
    with pytest.raises(CommandError, match="Nothing was changed"):
        setup()
    assert runs() == [("setup", "failed", app_version())]
    assert "Password refused" in SetupRun.objects.get().message


# --- upgrades: a pending migration (tests/ops/upgrade_migrations) on an existing installation ---


@pytest.fixture
def pending(needs_postgres, settings, tmp_path, owner, env):
    """An existing installation (the owner exists) with one migration to apply. PostgreSQL only:
    SQLite cannot migrate inside the test's transaction."""
    settings.MIGRATION_MODULES = {"backup": "tests.ops.upgrade_migrations"}
    settings.DATA_DIR = tmp_path
    upgrade_probe.backups_dir[:] = [tmp_path / "backups"]
    yield
    upgrade_probe.fail_with.clear()
    upgrade_probe.backups_seen.clear()
    upgrade_probe.backups_dir.clear()


def probe_applied() -> bool:
    return ("backup", "0001_probe") in MigrationRecorder(connection).applied_migrations()


def test_a_failed_upgrade_is_recorded_and_simply_run_again(pending):
    upgrade_probe.fail_with.append("disk full")

    with pytest.raises(CommandError, match="Migrating the database failed: disk full"):
        setup("--upgrade", "--skip-backup")

    failed = SetupRun.objects.get()
    assert (failed.kind, failed.outcome) == ("upgrade", "failed")
    assert "disk full" in failed.message and "run the same command again" in failed.message
    assert not probe_applied()
    check = io.StringIO()
    with pytest.raises(CommandError):
        call_command("talorys_check", stdout=check)
    assert "failed: upgrade of" in check.getvalue()

    again = setup("--upgrade", "--skip-backup")

    assert "Applied 1 database migration(s)." in again
    assert probe_applied()
    assert runs() == [("upgrade", "failed", app_version()), ("upgrade", "ok", app_version())]
    assert "Nothing to change" in setup("--upgrade")  # and then there is nothing left to do


def test_upgrade_backs_up_before_migrating(pending, settings):
    if "talorys_export" not in get_commands():
        pytest.skip("talorys_export (the backup app) does not exist yet")

    out = setup("--upgrade")

    (backup,) = (settings.DATA_DIR / "backups").iterdir()
    assert re.fullmatch(rf"talorys-{re.escape(app_version())}-\d{{8}}-\d{{6}}\.json", backup.name)
    assert upgrade_probe.backups_seen == [[backup.name]]  # written before the migration ran
    assert json.loads(backup.read_text())  # one whole document
    assert f"Backup written to {backup}." in out
    assert str(backup) in SetupRun.objects.get().message


def test_a_failed_backup_stops_the_upgrade_before_anything_changes(pending, settings):
    (settings.DATA_DIR / "backups").write_text("a file where the folder should be")
    before = installation()

    with pytest.raises(CommandError) as failed:
        setup("--upgrade")

    assert "The backup before migrating failed" in str(failed.value)
    assert "Nothing was changed." in str(failed.value)
    assert upgrade_probe.backups_seen == []  # the migration never ran
    assert installation() == before
    assert runs() == [("upgrade", "failed", app_version())]


def test_an_existing_installation_changes_only_when_the_operator_says_yes(pending, monkeypatch):
    asked: list[str] = []
    answers = iter(["n", "y"])

    def answer(prompt: str) -> str:
        asked.append(prompt)
        return next(answers)

    monkeypatch.setattr("builtins.input", answer)
    out = io.StringIO()
    call_command("talorys_setup", stdout=out)  # a person at the terminal: no --noinput

    assert "This installation already exists. This run would:" in out.getvalue()
    assert "  - apply 1 database migration(s)" in out.getvalue()
    assert out.getvalue().rstrip().endswith("Nothing was changed.")
    assert not probe_applied()
    assert runs() == []  # a run the operator cancelled did nothing to record

    call_command("talorys_setup", stdout=io.StringIO())

    assert len(asked) == 2
    assert probe_applied()
    assert runs() == [("setup", "ok", app_version())]


def test_yes_changes_an_existing_installation_unasked(pending, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt: pytest.fail(f"asked {prompt!r}"))

    call_command("talorys_setup", "--yes", stdout=io.StringIO())

    assert probe_applied()
