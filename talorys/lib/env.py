"""Typed readers for the environment, in the manner of healthchecks' settings.

A secret may also come from a file named by ``NAME_FILE`` (Docker and systemd secrets).

Every setting from the environment is read through these, almost all in the settings module;
a management command reads only what it alone needs (the address and port, the owner's name and
password at setup). The README lists them all.
"""

from __future__ import annotations

import math
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import Any


def env_str(name: str, default: str = "") -> str:
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        return Path(file_path).read_text().strip()
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from exc


def env_float(name: str, default: float) -> float:
    """A number such as seconds: whatever ``env_int`` takes, and decimals ("2.5"); not NaN or
    infinity, which would make a timeout or a schedule never come."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return float(default)
    try:
        value = float(raw)
    except ValueError:
        value = math.nan  # refused below, as NaN and infinity are
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a number, got {raw!r}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def persistent_secret(name: str, data_dir: Path, nbytes: int = 50) -> str:
    """The secret from the environment, or one generated once and kept in the data dir.

    The generated file is created with mode 0600 and never leaves the data dir, so the repository
    never holds a secret.
    """
    value = env_str(name)
    if value:
        return value
    path = data_dir / f".{name.lower()}"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(nbytes)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process generated it first: use theirs
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    return value


PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_data_dir(path: Path) -> None:
    """Make the data dir readable by this user only, from now on and for what is already there.

    It holds the database (and its WAL), the generated secrets, the embedded broker's messages
    and the static files: nothing another local user should read. The umask (0077) makes
    everything this process creates from here on private, SQLite's files included; the walk
    repairs what an earlier version left world-readable (0755 directories, 0644 files).
    Symlinks are left alone (chmod would change their target). A file we do not own cannot be
    changed: say so and go on, rather than refuse to start.
    """
    os.umask(0o077)
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    for dirpath, _dirnames, filenames in os.walk(path):
        _chmod(Path(dirpath), PRIVATE_DIR_MODE)
        for name in filenames:
            _chmod(Path(dirpath) / name, PRIVATE_FILE_MODE)


def _chmod(path: Path, mode: int) -> None:
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode) or stat.S_IMODE(info.st_mode) == mode:
            return
        path.chmod(mode)
    except FileNotFoundError:  # removed meanwhile (a broker message consumed)
        pass
    except PermissionError:
        sys.stderr.write(f"talorys: cannot make {path} private (mode {mode:o}): not ours\n")


def data_dir_storages(path: Path) -> dict[str, dict[str, Any]]:
    """Django's STORAGES with "files" added: the owner's files (files/storage.py), in
    ``path``/files, 0600 like the rest of the data dir. A larger install may point "files" at
    another backend in its own settings (files/storage.py says how)."""
    from django.conf import global_settings

    return {
        **global_settings.STORAGES,
        "files": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": path / "files", "file_permissions_mode": PRIVATE_FILE_MODE},
        },
    }


def database_pool_options() -> dict[str, float]:
    """psycopg_pool's options for PostgreSQL (Django 5.1+ pools when OPTIONS has "pool").

    A chat turn gives its connection back after each short trip to the database
    (agent/runner/db.py), so a few connections serve many concurrent turns; a request that finds
    none free within the timeout is answered 503 SERVICE_UNAVAILABLE (talorys/lib/errors.py), and
    the process never opens more than max_size, whatever the load.
    """
    return {
        "min_size": env_int("TALORYS_DB_POOL_MIN_SIZE", 2),
        "max_size": env_int("TALORYS_DB_POOL_MAX_SIZE", 10),
        "timeout": env_float("TALORYS_DB_POOL_TIMEOUT_SECONDS", 10),
    }
