"""Test settings: PostgreSQL when it answers (CI), SQLite otherwise.

With TALORYS_REQUIRE_SERVICES=1 a missing PostgreSQL is an error, not a fallback.
"""

import os
import tempfile

os.environ.setdefault("TALORYS_DATA_DIR", tempfile.mkdtemp(prefix="talorys-test-"))
os.environ.pop("REDIS_URL", None)  # tests that want Redis ask for it (tests/conftest.py)

from config.settings import *  # noqa: F403
from tests.services import postgres_url, require_services

_pg = postgres_url()
if _pg:
    import dj_database_url

    DATABASES = {"default": dj_database_url.parse(_pg)}
    # One test database per run, so that parallel runs on one machine never share one.
    DATABASES["default"]["TEST"] = {"NAME": f"talorys_test_{os.getpid()}"}
    if os.environ.get("TALORYS_DB_POOL_MAX_SIZE"):
        # A live server started with a pool (tests/agent/test_connection_pool.py) uses it as
        # production does (config/settings.py); the test process itself never sets it.
        DATABASES["default"]["OPTIONS"] = {"pool": database_pool_options()}  # noqa: F405
elif require_services():
    raise RuntimeError(
        "TALORYS_REQUIRE_SERVICES=1 but PostgreSQL does not answer at "
        + os.environ.get("TALORYS_TEST_POSTGRES", "127.0.0.1:5432")
    )

PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.MD5PasswordHasher"
]  # fast; argon2 is tested on its own
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
