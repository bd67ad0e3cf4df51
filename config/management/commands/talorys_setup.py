"""Set up or upgrade an installation, and record the run (talorys/ops).

In order: reach the database and Redis (nothing is touched when either is missing); see what
would change; ask before changing an existing installation (unless --yes or --noinput); check
the owner's new password; with --upgrade, back up before migrating; migrate; make sure the
secrets and the owner exist. An upgrade that finds no installation stops and says where it looked
(with --allow-new-install, a deployment's first run, it makes one). Every run that reached the database is recorded as a SetupRun, so
a failed upgrade is visible (admin, talorys_check) and is simply run again.
"""

from __future__ import annotations

import getpass
import io
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from talorys.accounts.services import owner_create, owner_password_set
from talorys.lib.env import env_str
from talorys.lib.errors import ValidationFailed
from talorys.notifications.push import vapid_key_ensure, vapid_key_path
from talorys.ops.models import SetupRun
from talorys.ops.selectors import app_version
from talorys.ops.services import setup_run_record
from talorys.owner.selectors import owner_settings_get

NOTHING_CHANGED = "Nothing was changed."


class SetupFailed(CommandError):
    """A step failed; `message` says what to fix. Recorded as a failed run."""


@dataclass
class Plan:
    """What this run would change, read before anything is."""

    existing: bool  # the database has been migrated before
    pending: list[str]  # migrations to apply, "app.name"
    username: str
    owner_exists: bool
    changes: list[str] = field(default_factory=list)


class Command(BaseCommand):
    help = (
        "Set up or upgrade Talorys: check the database and Redis, migrate (after a backup with "
        "--upgrade), generate missing secrets, create the owner account. The owner's password "
        "comes from TALORYS_OWNER_PASSWORD, the prompt, or is generated and printed once."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--noinput",
            "--no-input",
            action="store_true",
            dest="noinput",
            help="Ask nothing: change an existing installation without asking, generate the "
            "password unless TALORYS_OWNER_PASSWORD is set.",
        )
        parser.add_argument(
            "--yes", "-y", action="store_true", help="Change an existing installation unasked."
        )
        parser.add_argument(
            "--reset-password",
            action="store_true",
            help="Set a new owner password and end every session of the owner.",
        )
        parser.add_argument(
            "--upgrade",
            action="store_true",
            help="Back up the data (talorys_export, into the data directory's backups/) before "
            "applying migrations; recorded as an upgrade.",
        )
        parser.add_argument(
            "--allow-new-install",
            action="store_true",
            help="With --upgrade: when the database has no installation, make a new one (a "
            "deployment's first run) instead of stopping.",
        )
        parser.add_argument(
            "--skip-backup",
            action="store_true",
            help="With --upgrade: migrate without the backup (after taking one yourself).",
        )

    def handle(self, *args, noinput: bool, reset_password: bool, **options):
        started_at = timezone.now()
        upgrade = bool(options.get("upgrade"))
        kind = SetupRun.Kind.UPGRADE if upgrade else SetupRun.Kind.SETUP
        strict = upgrade and not options.get("allow_new_install")  # only an existing one
        self._check_database(strict=strict)  # without it there is nowhere to record the run
        done: list[str] = []
        try:
            self._check_redis()
            plan = self._plan(reset_password=reset_password)
            if upgrade and not plan.existing:
                kind = self._new_install(strict, done)
            asks = plan.existing and plan.changes and not (noinput or options.get("yes"))
            if asks and not self._confirm(plan):
                self.stdout.write(NOTHING_CHANGED)
                return
            password = self._owner_password(plan, noinput=noinput, reset_password=reset_password)
            backup = upgrade and plan.existing and not options.get("skip_backup")
            self._upgrade(plan, done, backup_at=started_at if backup else None)
            done += self._secrets()
            done += self._owner(plan, password)
        except SetupFailed as exc:
            self._record(kind=kind, started_at=started_at, ok=False, message=str(exc))
            raise
        except Exception as exc:  # unforeseen: recorded too, so the failed run shows
            message = f"Setup stopped: {exc!r}. {' '.join(done)} Fix the cause and run it again."
            self._record(kind=kind, started_at=started_at, ok=False, message=message)
            raise CommandError(message) from exc
        self._done(kind=kind, started_at=started_at, changed=bool(plan.changes), done=done)
        if password and password.generated:
            self.stdout.write(self.style.WARNING(f"OWNER PASSWORD (shown once): {password.text}"))

    def _upgrade(self, plan, done: list[str], *, backup_at) -> None:
        """Migrate what is pending, after a backup when ``backup_at`` names its time."""
        if not plan.pending:
            return
        if backup_at is not None:
            done.append(f"Backup written to {self._backup(backup_at)}.")
        self._migrate(plan, done)

    def _done(self, *, kind: str, started_at, changed: bool, done: list[str]) -> None:
        """Say what was done and record the run as a success."""
        if not changed:
            done.append("Nothing to change: the installation is up to date.")
        for line in done:
            self.stdout.write(line)
        self._record(kind=kind, started_at=started_at, ok=True, message="\n".join(done))
        self.stdout.write(self.style.SUCCESS(f"Talorys {app_version()}: {kind} done."))

    # --- before anything changes ----------------------------------------------------------------

    def _check_database(self, *, strict: bool) -> None:
        db = settings.DATABASES["default"]
        where = _database_where()
        if strict and _sqlite_file(db) and not Path(db["NAME"]).exists():
            # Connecting would create the file: an upgrade must not make an empty database.
            raise CommandError(_no_installation(f"({where}) does not exist"))
        try:
            _connect_directly()
            connection.ensure_connection()
        except Exception as exc:
            if _database_missing(exc):
                raise CommandError(_create_it(db)) from exc
            raise CommandError(
                f"Cannot connect to the database ({where}): {exc}. Check DATABASE_URL and that "
                f"the database server is running, then run this again. {NOTHING_CHANGED}"
            ) from exc

    def _new_install(self, strict: bool, done: list[str]) -> SetupRun.Kind:
        """An upgrade that found no installation: stop, or (--allow-new-install) say that this
        run makes a new one, and record it as a setup."""
        found = f"({_database_where()}) has no Talorys tables"
        if strict:
            raise SetupFailed(_no_installation(found))
        done.append(f"No installation to upgrade: the database {found}; making a new one.")
        return SetupRun.Kind.SETUP

    def _check_redis(self) -> None:
        if not settings.REDIS_URL:
            return
        import redis

        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5)
        where = "{host}:{port}".format(**client.connection_pool.connection_kwargs)
        try:
            client.ping()
        except Exception as exc:
            raise SetupFailed(
                f"Redis at {where} (REDIS_URL) does not answer: {exc}. Start Redis or fix "
                f"REDIS_URL, then run this again. {NOTHING_CHANGED}"
            ) from exc

    def _plan(self, *, reset_password: bool) -> Plan:
        executor = MigrationExecutor(connection)
        applied = executor.loader.applied_migrations
        targets = executor.loader.graph.leaf_nodes()
        pending = [f"{m.app_label}.{m.name}" for m, _ in executor.migration_plan(targets)]
        username = env_str("TALORYS_OWNER_USERNAME", "owner")
        user_model = get_user_model()
        owner_exists = user_model._meta.db_table in connection.introspection.table_names() and (
            user_model.objects.filter(username=username).exists()
        )
        plan = Plan(bool(applied), pending, username, owner_exists)
        if pending:
            plan.changes.append(f"apply {len(pending)} database migration(s)")
        if not owner_exists:
            plan.changes.append(f"create the owner account {username!r}")
        elif reset_password:
            plan.changes.append(f"set a new password for {username!r} and end its sessions")
        if not settings.TALORYS_VAPID_PRIVATE_KEY and not vapid_key_path().exists():
            plan.changes.append("generate the Web Push (VAPID) key")
        return plan

    def _confirm(self, plan: Plan) -> bool:
        self.stdout.write("This installation already exists. This run would:")
        for change in plan.changes:
            self.stdout.write(f"  - {change}")
        try:
            answer = input("Go ahead? [y/N] ")
        except EOFError:  # no terminal to answer from: the safe answer
            answer = ""
        return answer.strip().lower() in ("y", "yes")

    def _owner_password(
        self, plan: Plan, *, noinput: bool, reset_password: bool
    ) -> _Password | None:
        """The owner's new password, checked before migrating so a refused one changes nothing."""
        if plan.owner_exists and not reset_password:
            return None
        text = env_str("TALORYS_OWNER_PASSWORD")
        if not text and not noinput:
            text = getpass.getpass(f"Password for {plan.username!r} (empty to generate one): ")
        if not text:
            return _Password(secrets.token_urlsafe(15), generated=True)
        try:
            validate_password(text, get_user_model()(username=plan.username))
        except ValidationError as exc:
            raise SetupFailed(
                f"Password refused: {' '.join(exc.messages)} Choose a longer, less common one "
                f"(or leave it empty to generate one). {NOTHING_CHANGED}"
            ) from exc
        return _Password(text, generated=False)

    # --- the changes ------------------------------------------------------------------------------

    def _backup(self, started_at) -> Path:
        folder = settings.DATA_DIR / "backups"
        path = folder / f"talorys-{app_version()}-{started_at:%Y%m%d-%H%M%S}.json"
        try:
            folder.mkdir(exist_ok=True)
            call_command("talorys_export", str(path), stdout=io.StringIO())
        except Exception as exc:
            if path.is_file():  # a partial backup must not pass for a whole one
                path.unlink()
            raise SetupFailed(
                f"The backup before migrating failed: {exc}. {NOTHING_CHANGED} Make room in "
                f"{folder} (or fix the cause) and run this again; or take a backup with the "
                "previous version (`talorys_export FILE`) and run "
                "`talorys_setup --upgrade --skip-backup`."
            ) from exc
        return path

    def _migrate(self, plan: Plan, done: list[str]) -> None:
        try:
            call_command("migrate", interactive=False, verbosity=0)
        except Exception as exc:
            raise SetupFailed(
                f"Migrating the database failed: {exc}. {' '.join(done)} Migrations applied "
                "before the failure stay applied (each one is all or nothing); fix the cause "
                "and run the same command again: it goes on from there."
            ) from exc
        done.append(f"Applied {len(plan.pending)} database migration(s).")

    def _secrets(self) -> list[str]:
        lines = []
        if env_str("SECRET_KEY"):
            lines.append("Secret key: from SECRET_KEY (kept).")
        else:  # settings generated it on first start, in the data dir, and keep reading it
            lines.append("Secret key: in the data directory (made at the first start, then kept).")
        existed = vapid_key_path().exists()
        if vapid_key_ensure() is None:  # None: the key comes from TALORYS_VAPID_PRIVATE_KEY
            lines.append("Web Push (VAPID) key: from TALORYS_VAPID_PRIVATE_KEY (kept).")
        elif existed:
            lines.append("Web Push (VAPID) key: kept in the data directory.")
        else:
            lines.append("Web Push (VAPID) key generated in the data directory.")
        return lines

    def _owner(self, plan: Plan, password: _Password | None) -> list[str]:
        owner_settings_get()
        if password is None:
            return [f"Owner account {plan.username!r} exists."]
        try:
            if not plan.owner_exists:
                owner_create(username=plan.username, password=password.text)
                return [f"Created the owner account {plan.username!r}."]
            user = get_user_model().objects.get(username=plan.username)
            owner_password_set(user=user, password=password.text)
        except ValidationFailed as exc:
            raise SetupFailed(f"Password refused: {exc.message}") from exc
        return [f"New password set for {plan.username!r}; every session of it has ended."]

    def _record(self, *, kind: str, started_at, ok: bool, message: str) -> None:
        """Record the run, where the table exists (a fresh database has it once migrated)."""
        try:
            if SetupRun._meta.db_table in connection.introspection.table_names():
                setup_run_record(kind=kind, started_at=started_at, ok=ok, message=message)
        except Exception as exc:  # the database went away mid-run: say so, keep the real error
            self.stderr.write(f"This run could not be recorded: {exc}")


def _database_where() -> str:
    """The database this run uses, in words: its engine, name and server."""
    db = settings.DATABASES["default"]
    where = f"{db['ENGINE'].rsplit('.', 1)[-1]} {db.get('NAME')!s}"
    if db.get("HOST"):
        where += f" on {db['HOST']}:{db.get('PORT') or 'default port'}"
    return where


def _sqlite_file(db: Mapping[str, Any]) -> bool:
    """A SQLite database kept in a file (not one in memory, as a test's)."""
    name = str(db["NAME"])
    return db["ENGINE"].endswith("sqlite3") and name != ":memory:" and not name.startswith("file:")


def _no_installation(found: str) -> str:
    return (
        f"No installation to upgrade: the database {found}; the data directory is {settings.DATA_DIR}. "
        "Point DATABASE_URL and TALORYS_DATA_DIR at the existing installation, or run "
        "`talorys_setup` without --upgrade (or with --allow-new-install) to make a new one. "
        f"{NOTHING_CHANGED}"
    )


def _connect_directly() -> None:
    """Open and close one PostgreSQL connection outside the pool: the pool retries a refused
    connection in the background and says only that none came within its timeout (10 s), where
    the server's own answer ("database ... does not exist") tells the operator what to fix."""
    if connection.vendor != "postgresql":
        return
    import psycopg

    params = connection.get_connection_params()
    psycopg.connect(**params, connect_timeout=10).close()


# The server's answer to a connection to a database it does not have (invalid_catalog_name).
# psycopg has no SQLSTATE for a failed connection, only the server's message.
_MISSING_DATABASE = "3D000"
_MISSING_DATABASE_TEXT = re.compile(r'database ".*" does not exist')


def _database_missing(error: BaseException | None) -> bool:
    while error is not None:
        if getattr(error, "sqlstate", None) == _MISSING_DATABASE or _MISSING_DATABASE_TEXT.search(
            str(error)
        ):
            return True
        error = error.__cause__ or error.__context__
    return False


def _create_it(db: Mapping[str, Any]) -> str:
    name, user = db["NAME"], db.get("USER") or "postgres"
    host, port = db.get("HOST") or "localhost", db.get("PORT") or 5432
    return (
        f"The database {name!r} does not exist on the PostgreSQL server at {host}:{port} "
        f"(DATABASE_URL). Create it, as a user allowed to: `createdb -h {host} -p {port} "
        f"-U {user} {name}` (or `psql -h {host} -p {port} -U {user} -d postgres -c "
        f"'CREATE DATABASE \"{name}\"'`), or fix the name in DATABASE_URL; then run this again. "
        f"{NOTHING_CHANGED}"
    )


@dataclass(frozen=True)
class _Password:
    text: str
    generated: bool
