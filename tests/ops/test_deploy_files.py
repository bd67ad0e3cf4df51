"""The Dockerfile, .dockerignore and compose.yaml against the code they deploy.

Docker is not run here; these catch what would only show on a server: a variable the app never
reads (a typo leaves the default silently in place), a command or health check aimed at
something that does not exist, data kept outside the volume, code left out of the image.
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from celery import Celery
from channels.routing import ProtocolTypeRouter

from tests.ops.test_first_party_lists import installed_first_party

ROOT = Path(__file__).resolve().parents[2]


# --- reading the files -------------------------------------------------------------------------


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def built_here(services: dict) -> dict:
    """The services that run this repository's image (the others are postgres and redis)."""
    return {name: svc for name, svc in services.items() if "build" in svc}


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def dockerfile(word: str) -> list[str]:
    return [rest for found, rest in dockerfile_instructions() if found == word]


def dockerfile_env() -> dict[str, str]:
    env = {}
    for rest in dockerfile("ENV"):
        env.update(dict(re.findall(r"([A-Z_][A-Z0-9_]*)=(\S+)", rest)))
    return env


def healthcheck_command() -> list[str]:
    (rest,) = dockerfile("HEALTHCHECK")
    return json.loads(rest[rest.index("CMD") + 3 :])


def variables_the_app_reads() -> set[str]:
    """Every variable read through talorys.lib.env's helpers or os.environ, anywhere in the apps.
    ``env_str`` (and ``persistent_secret``, built on it) also read ``NAME_FILE``."""
    reader = re.compile(
        r"\b(env_str|env_bool|env_int|env_float|env_list|persistent_secret|os\.environ\.get|os\.getenv"
        r"|os\.environ\.setdefault)\(\s*[\"']([A-Z][A-Z0-9_]*)[\"']"
    )
    read = set()
    sources = [
        ROOT / "manage.py",
        *(p for app in installed_first_party() for p in (ROOT / app).rglob("*.py")),
    ]
    for path in sources:
        for helper, name in reader.findall(path.read_text()):
            read.add(name)
            if helper in ("env_str", "persistent_secret"):
                read.add(f"{name}_FILE")
        read.update(re.findall(r"os\.environ\[[\"']([A-Z][A-Z0-9_]*)[\"']\]", path.read_text()))
    return read


# --- compose.yaml ------------------------------------------------------------------------------


def test_compose_sets_only_variables_the_app_reads():
    services = built_here(compose()["services"])
    assert {"migrate", "web", "worker", "beat"} <= set(services)
    read = variables_the_app_reads()
    for name, service in services.items():
        environment = set(service["environment"])
        assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY_FILE", "ALLOWED_HOSTS"} <= environment
        assert environment - read == set(), f"{name} sets variables Talorys never reads"


def test_migrations_run_once_before_the_app_starts():
    services = compose()["services"]
    migrate = services["migrate"]
    # talorys_setup migrates (after a backup, on an existing installation) and asks nothing.
    assert migrate["command"] == [
        "python",
        "manage.py",
        "talorys_setup",
        "--upgrade",
        "--allow-new-install",  # the first deployment has no installation to upgrade yet
        "--noinput",
    ]
    assert migrate["restart"] == "no"
    assert migrate["healthcheck"] == {"disable": True}  # it exits: nothing to watch
    for name in ("web", "worker", "beat"):
        assert services[name]["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"
        }, name


def test_the_celery_services_load_the_celery_app():
    services = compose()["services"]
    for name in ("worker", "beat"):
        command = services[name]["command"]
        app = command[command.index("-A") + 1]
        # celery -A <package> looks for <package>.celery:app
        assert isinstance(importlib.import_module(f"{app}.celery").app, Celery), name


def test_the_data_directory_is_the_volume():
    assert dockerfile_env()["TALORYS_DATA_DIR"] == "/data"
    assert json.loads(dockerfile("VOLUME")[0]) == ["/data"]
    for name, service in built_here(compose()["services"]).items():
        assert service["environment"]["TALORYS_DATA_DIR"] == "/data", name
        assert any(v.split(":")[1] == "/data" for v in service["volumes"]), name


def test_every_long_running_service_restarts_has_a_health_check_and_keeps_data_on_volumes():
    config = compose()
    services = config["services"]
    assert {"db", "redis", "web", "worker", "beat"} <= set(services)
    for name, service in services.items():
        if name == "migrate":
            continue
        assert service["restart"] in ("unless-stopped", "always"), name
        check = service["healthcheck"]
        assert check.get("disable") is None, name
        assert check["test"][0] == "CMD" and len(check["test"]) > 1, name
        assert {"interval", "timeout", "retries"} <= set(check), name
        for volume in service["volumes"]:
            source = volume.split(":")[0]
            # A named volume, declared once: no bind mount of a host folder for the data.
            assert source in config["volumes"], f"{name}: {volume}"
    assert services["db"]["volumes"] == ["pg-data:/var/lib/postgresql/data"]
    assert services["redis"]["volumes"] == ["redis-data:/data"]


def test_the_web_check_is_the_images_own():
    web = compose()["services"]["web"]
    assert web["healthcheck"]["test"] == ["CMD", *healthcheck_command()]


@pytest.mark.django_db
@pytest.mark.parametrize("service", ["worker", "beat"])
def test_the_worker_and_beat_checks_pass_on_a_fresh_heartbeat_only(service):
    from django.core.management import CommandError, call_command

    from talorys.ops.services import heartbeat_record

    command = compose()["services"][service]["healthcheck"]["test"]
    assert command[1:4] == ["python", "manage.py", "talorys_check"], command
    args = command[4:]
    with pytest.raises(CommandError):
        call_command("talorys_check", *args)  # never seen: unhealthy
    heartbeat_record(name=service)
    call_command("talorys_check", *args)


def test_secrets_come_from_files_and_an_optional_env_file():
    for name, service in built_here(compose()["services"]).items():
        assert service["secrets"] == ["secret_key"], name
        assert service["environment"]["SECRET_KEY_FILE"] == "/run/secrets/secret_key", name
        # .env is optional: a server configured through the environment alone still starts.
        assert service["env_file"] == [{"path": ".env", "required": False}], name
    assert compose()["secrets"]["secret_key"] == {"file": "./secrets/secret_key"}


# --- Dockerfile --------------------------------------------------------------------------------


def test_the_image_serves_the_projects_asgi_application_on_its_port():
    """The CMD is talorys_web (talorys/ops/web.py): daphnes serving the project's ASGI app on
    HOST:PORT, which the image sets to every address and the port it exposes."""
    from django.core.management import get_commands

    from talorys.ops.web import ASGI_APPLICATION

    (cmd,) = dockerfile("CMD")
    assert json.loads(cmd) == ["python", "manage.py", "talorys_web"]
    assert get_commands()["talorys_web"] == "config"
    module, attr = ASGI_APPLICATION.split(":")
    assert isinstance(getattr(importlib.import_module(module), attr), ProtocolTypeRouter)
    env = dockerfile_env()
    assert env["HOST"] == "0.0.0.0"  # the published port reaches it from outside the container
    assert dockerfile("EXPOSE") == [env["PORT"]]
    web_ports = compose()["services"]["web"]["ports"]
    assert [mapping.rsplit(":", 1)[1] for mapping in web_ports] == [env["PORT"]]
    assert {"HOST", "PORT"} <= variables_the_app_reads()
    assert env["PYTHONPATH"] == "/app"  # pip install . installs no packages
    assert dockerfile("WORKDIR") == ["/app"]


def test_the_image_runs_as_an_unprivileged_user():
    (user,) = dockerfile("USER")
    assert user not in ("root", "0")


@pytest.mark.django_db(transaction=True)
def test_the_health_check_passes_against_a_running_server(live_server):
    """The image's own HEALTHCHECK command, run against a live server: it exits 0, sending a
    Host the server allows (the first plain name of ALLOWED_HOSTS), and fails on a 400."""
    command = healthcheck_command()
    port = dockerfile_env()["PORT"]  # talorys_web's (the CMD's) port
    script = command[-1]
    assert f"http://127.0.0.1:{port}/api/health" in script
    script = script.replace(f"127.0.0.1:{port}", live_server.url.removeprefix("http://"))
    # The image's 4 s bound is Docker's to judge; here a busy machine must not fail the check.
    assert "timeout=4)" in script
    script = script.replace("timeout=4)", "timeout=60)")

    def run(allowed_hosts: str) -> int:
        env = {**os.environ, "ALLOWED_HOSTS": allowed_hosts}
        return subprocess.run([sys.executable, "-c", script], env=env, timeout=30).returncode

    assert command[:2] == ["python", "-c"]
    assert run(".example.org,localhost") == 0
    assert run("talorys.example.org") != 0  # not among the test server's hosts: 400


# --- .dockerignore -----------------------------------------------------------------------------


def ignored(path: str, patterns: list[str]) -> bool:
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch.fnmatch(prefix, pattern.removeprefix("**/"))
        or fnmatch.fnmatch(part, pattern.removeprefix("**/"))
        for pattern in patterns
        for prefix, part in zip(prefixes, parts, strict=True)
    )


def test_dockerignore_keeps_the_code_and_leaves_out_state_and_secrets():
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    needed = [
        "manage.py",
        "pyproject.toml",
        "templates/base.html",
        *(f"{a}/apps.py" for a in installed_first_party()),
    ]
    needed += [str(p.relative_to(ROOT)) for p in (ROOT / "static").rglob("*") if p.is_file()][:5]
    for path in needed:
        assert (ROOT / path).exists(), path
        assert not ignored(path, patterns), path
    for path in [".venv", "data/talorys.sqlite3", ".git", "secrets/secret_key", ".env"]:
        assert ignored(path, patterns), path
    assert ignored("talorys/__pycache__/settings.cpython-311.pyc", patterns)


def test_web_and_worker_ask_the_one_embedder_service_on_its_port():
    services = compose()["services"]
    command = services["embedder"]["command"]
    assert command[:3] == ["python", "manage.py", "talorys_embedder"]
    port = command[command.index("--listen") + 1].rsplit(":", 1)[1]
    for name in ("web", "worker"):
        assert services[name]["environment"]["TALORYS_EMBEDDER_URL"] == f"http://embedder:{port}"
    assert "ports" not in services["embedder"]  # no authentication: never published
