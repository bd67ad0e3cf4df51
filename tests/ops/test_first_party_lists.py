"""Every config list of the first-party apps names exactly the apps INSTALLED_APPS runs from the
repository: a new app added to settings but not to mypy or the layers contract would go unchecked
without anyone noticing. (deptry, the import check, scans the whole repository: it has no list.)"""

import tomllib
from pathlib import Path

from django.apps import apps

ROOT = Path(__file__).resolve().parents[2]


def installed_first_party() -> set[str]:
    """The top-level packages of the installed apps whose code lives in this repository."""
    names = set()
    for config in apps.get_app_configs():
        path = Path(config.path).resolve()
        if path.is_relative_to(ROOT) and not path.is_relative_to(ROOT / ".venv"):
            names.add(config.name.split(".")[0])
    return names


def test_installed_first_party_apps_are_the_repository_packages():
    assert installed_first_party() == {
        "config",
        "talorys",
        "agent",
        "files",
        "memory",
        "approvals",
        "automations",
        "backup",
        "imports",
    }


def test_every_config_list_names_the_installed_first_party_apps():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    lists = {
        "[tool.mypy] files": set(config["mypy"]["files"]),
        "[tool.importlinter] root_packages": set(config["importlinter"]["root_packages"]),
        "[tool.ruff.lint.isort] known-first-party": set(
            config["ruff"]["lint"]["isort"]["known-first-party"]
        )
        - {"tests"},
    }
    installed = installed_first_party()
    wrong = {
        where: sorted(names ^ installed) for where, names in lists.items() if names != installed
    }
    assert not wrong, f"differ from the installed first-party apps: {wrong}"
