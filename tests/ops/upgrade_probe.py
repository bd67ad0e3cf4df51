"""The switch and the log of tests/ops/upgrade_migrations' one migration (kept out of that
package: the migration loader reloads it, which would reset them)."""

from __future__ import annotations

from pathlib import Path

fail_with: list[str] = []  # a message here makes the next apply fail with it
backups_seen: list[list[str]] = []  # the backups folder's files, as each apply found them
backups_dir: list[Path] = []
