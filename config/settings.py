"""Talorys settings: one module, read from the environment (the README lists every variable)."""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from talorys.lib.env import (
    data_dir_storages,
    database_pool_options,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_str,
    persistent_secret,
    private_data_dir,
)
from talorys.lib.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("TALORYS_DATA_DIR", str(BASE_DIR / "data"))).resolve()
# 0700 / 0600, and a umask that keeps it so (the database, the secrets, the broker's messages).
private_data_dir(DATA_DIR)

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = persistent_secret("SECRET_KEY", DATA_DIR)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "talorys.accounts.apps.OwnerAdminConfig",  # django.contrib.admin, with a throttled login
    # Before django.contrib.auth: its createsuperuser refuses a second owner (accounts/owner.py).
    "talorys.accounts",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "ninja",
    "django_celery_beat",
    "csp",
    "talorys",
    "config",
    "talorys.owner",
    "talorys.history",
    "talorys.workspace",
    "talorys.notifications",
    "memory",
    "approvals",
    "files",
    "agent",
    "automations",
    "backup",
    "imports",
    "talorys.ops",
]

MIDDLEWARE = [
    "talorys.web.request_ids.RequestIdMiddleware",  # first: every later log line carries the id
    "django.middleware.security.SecurityMiddleware",
    "talorys.web.bodies.BodyLimitMiddleware",
    "talorys.web.middleware.ApiErrorEnvelopeMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "talorys.accounts.middleware.SessionLifetimeMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, and synchronous only: under ASGI Django then runs every middleware above in the
    # request's one worker thread. Before it, the three above ran async, and each of their
    # process_request/process_response calls hopped to that thread and back (six hops a request).
    "talorys.owner.middleware.OwnerTimeZoneMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "talorys.owner.context.owner_header",
            ],
            # {{ time|when }} and {{ text|markdown }} in every template, no {% load %} needed.
            "builtins": ["talorys.templatetags.talorys_tags"],
        },
    },
]

# Database: SQLite in the data dir unless DATABASE_URL names another.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'talorys.sqlite3'}",
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0),
    )
}


_db = DATABASES["default"]
if _db["ENGINE"] == "django.db.backends.postgresql" and env_bool("TALORYS_DB_POOL", True):
    # The pool keeps the connections: Django refuses persistent ones beside it.
    _db["CONN_MAX_AGE"] = 0
    _db.setdefault("OPTIONS", {})["pool"] = database_pool_options()
if _db["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web process read while the worker writes; the busy timeout makes writers
    # queue instead of failing with "database is locked".
    _db["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: when set, broker, channel layer and cache; when unset, embedded defaults.
REDIS_URL = env_str("REDIS_URL")
# An open page stays in its notifications group as long as its session may live (not a day).
GROUP_EXPIRY = env_int("TALORYS_SESSION_LIFETIME_SECONDS", 30 * 24 * 3600)
# Longer than channels_redis's 5 s blocking pop, so a quiet channel is never a read timeout.
REDIS_LAYER_READ_TIMEOUT = 15
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # redis-py waits forever by default: a Redis that hangs would hang each login with
            # it, where one that does not answer in time is counted without (accounts/counters.py).
            "OPTIONS": {"socket_connect_timeout": 3, "socket_timeout": 3},
        }
    }
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # Every consumer waits on its channel with a 5 s BZPOPMIN: redis-py's default 5 s
            # read timeout raced it, and the loser's socket closed with 1011 (benchmarks/load.py).
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": REDIS_LAYER_READ_TIMEOUT}],
                "group_expiry": GROUP_EXPIRY,
            },
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            "CONFIG": {"group_expiry": GROUP_EXPIRY},
        }
    }
    # A broker that needs no server, kept in the data dir: kombu's filesystem transport with
    # atomic writes, and a message file that does not decode set aside in broken/ instead of
    # stopping the worker (talorys/ops/broker.py).
    _broker_dir = DATA_DIR / "broker"
    for _sub in ("queue", "processed", "control", "broken"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT = "talorys.ops.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "broken_folder": str(_broker_dir / "broken"),
        "store_processed": False,
    }

CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# django-celery-beat's database scheduler, installing this file's jobs once: the operator's pause
# or interval in the admin (System jobs) outlasts a restart (talorys/ops/beat.py).
CELERY_BEAT_SCHEDULER = "talorys.ops.beat:SystemJobScheduler"
CELERY_TIMEZONE = "UTC"
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# How often the worker and beat prove they are alive; /api/health calls one stale after 3 times
# this without a heartbeat (talorys/ops/selectors.py).
TALORYS_HEARTBEAT_SECONDS = env_int("TALORYS_HEARTBEAT_SECONDS", 30)
# The system jobs: installed into django-celery-beat's table by the first beat start without them,
# shown in the admin (System jobs), where the operator may pause one or change its interval.
CELERY_BEAT_SCHEDULE = {
    "approvals-expire": {"task": "approvals.tasks.expire_pending_actions", "schedule": 60.0},
    "approvals-prune": {"task": "approvals.tasks.prune_pending_actions", "schedule": 6 * 3600.0},
    # The one purge job, over every kind in the bin (talorys/history/bin.py).
    "bin-purge": {"task": "talorys.history.tasks.purge_bin", "schedule": 6 * 3600.0},
    # The recall index's catch-up (memory/recall/writer.py); a turn also catches up lazily.
    "recall-reindex": {
        "task": "memory.tasks.reindex_recall",
        "schedule": env_float("TALORYS_REINDEX_SECONDS", 600),
        "options": {"expire_seconds": 300},
    },
    # Every 2 s (was 5; half of it was the mean dispatch lag): an automation starts about this
    # long after its slot at most. The tick is one indexed query when nothing is due. A tick that
    # waited in the queue for 30 s is dropped (workers were busy); a later tick does its work.
    "automations-dispatch": {
        "task": "automations.tasks.dispatch_due",
        "schedule": env_float("TALORYS_DISPATCH_SECONDS", 2),
        "options": {"expire_seconds": 30},
    },
    "automations-housekeeping": {"task": "automations.tasks.housekeeping", "schedule": 300.0},
    "push-flush": {"task": "talorys.notifications.tasks.flush_push_deliveries", "schedule": 30.0},
    "channels-flush": {
        "task": "talorys.notifications.tasks.flush_channel_deliveries",
        "schedule": 30.0,
    },
    # Proof of life (talorys/ops/tasks.py): beat records itself as it sends, the worker as it runs
    # it. A tick that waited a whole interval is dropped: the worker's heartbeat then goes stale.
    "ops-heartbeat": {
        "task": "talorys.ops.tasks.heartbeat",
        "schedule": float(TALORYS_HEARTBEAT_SECONDS),
        "options": {"expire_seconds": TALORYS_HEARTBEAT_SECONDS},
    },
}
# Web Push (VAPID): the private key (PEM, or base64url DER/raw) from the environment, else the
# one talorys_setup generated in the data dir. The subject is who push services may contact.
TALORYS_VAPID_PRIVATE_KEY = env_str("TALORYS_VAPID_PRIVATE_KEY")
TALORYS_VAPID_SUBJECT = env_str("TALORYS_VAPID_SUBJECT", "mailto:owner@talorys.invalid")
# Push endpoints go to public https:// push services only; a self-hosted one is allowed here by
# name, "host" (any port) or "host:port", comma-separated (talorys/notifications/push_endpoints.py).
TALORYS_PUSH_ALLOWED_HOSTS = env_list("TALORYS_PUSH_ALLOWED_HOSTS", [])
# Where the owner opens Talorys, for links in messages sent to channels (ntfy, email, ...):
# TALORYS_PUBLIC_URL, else the first CSRF trusted origin, else this machine's address.
_PUBLIC = env_str("TALORYS_PUBLIC_URL") or (CSRF_TRUSTED_ORIGINS or [""])[0]
TALORYS_PUBLIC_URL = (_PUBLIC or f"http://127.0.0.1:{env_int('PORT', 8000)}").rstrip("/")
# Given, not guessed: only then do MCP tool results carry absolute links (config/mcp/access.py).
TALORYS_PUBLIC_URL_GIVEN = bool(_PUBLIC)

# Auth and sessions.
AUTH_PASSWORD_VALIDATORS = [
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 10},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
LOGIN_URL = "/login/"
SESSION_ENGINE = "django.contrib.sessions.backends.db"
SESSION_IDLE_TIMEOUT = env_int("TALORYS_SESSION_IDLE_SECONDS", 7 * 24 * 3600)
SESSION_ABSOLUTE_LIFETIME = SESSION_COOKIE_AGE = GROUP_EXPIRY  # TALORYS_SESSION_LIFETIME_SECONDS
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = env_bool("TALORYS_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
CSRF_COOKIE_SAMESITE = "Lax"
# Login throttling: failures allowed per client address and per username within the window.
LOGIN_FAILURES_PER_CLIENT = env_int("TALORYS_LOGIN_FAILURES_PER_CLIENT", 10)
LOGIN_FAILURES_PER_USERNAME = env_int("TALORYS_LOGIN_FAILURES_PER_USERNAME", 5)
LOGIN_THROTTLE_WINDOW = env_int("TALORYS_LOGIN_THROTTLE_SECONDS", 15 * 60)
# Password checks one process runs at once (argon2 takes about 100 MiB each); more answer 429.
LOGIN_CONCURRENT_HASHES = env_int("TALORYS_LOGIN_CONCURRENT_HASHES", 2)
# MCP requests a token may make a minute, any method, counted in Redis (config/mcp/access.py).
MCP_REQUESTS_PER_MINUTE = env_int("TALORYS_MCP_REQUESTS_PER_MINUTE", 60)
# Only behind a reverse proxy that sets X-Forwarded-For: the client address for throttling.
TRUST_X_FORWARDED_FOR = env_bool("TALORYS_TRUST_X_FORWARDED_FOR", False)
# Only behind a TLS-terminating proxy that sets X-Forwarded-Proto (and drops the client's own):
# whether a request, or a WebSocket handshake's origin, is https (talorys/web/origins.py).
if env_bool("TALORYS_TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# How many proxies of ours append to X-Forwarded-For: the client is that many entries from the
# right (entries further left are whatever the client sent).
TRUSTED_PROXY_HOPS = env_int("TALORYS_TRUSTED_PROXY_HOPS", 1)

# Request bodies over this many bytes are refused (413) before they are read; a route that needs
# more maps its path prefix to its own limit here (talorys/web/bodies.py). 2.5 MiB: Django's default.
MAX_BODY_BYTES = env_int("TALORYS_MAX_BODY_BYTES", 2_621_440)
# A backup import may be larger: the API's route and the /backup/ page's upload.
MAX_IMPORT_BYTES = env_int("TALORYS_MAX_IMPORT_BYTES", 50 * 1024 * 1024)
# Another tool's export (imports/): a ChatGPT zip of years of chats passes 50 MB.
MAX_CHAT_IMPORT_BYTES = env_int("TALORYS_MAX_CHAT_IMPORT_BYTES", 200 * 1024 * 1024)
# The owner's files (files/): one file, all of them, and reading one file's text (a child process).
TALORYS_MAX_FILE_BYTES = env_int("TALORYS_MAX_FILE_BYTES", 25 * 1024 * 1024)
TALORYS_MAX_FILES_TOTAL_BYTES = env_int("TALORYS_MAX_FILES_TOTAL_BYTES", 2 * 1024**3)
TALORYS_FILE_EXTRACT_SECONDS = env_float("TALORYS_FILE_EXTRACT_SECONDS", 60.0)
TALORYS_FILE_EXTRACT_MEMORY_BYTES = env_int("TALORYS_FILE_EXTRACT_MEMORY_BYTES", 1024**3)
BODY_LIMITS: dict[str, int] = {
    "/api/backup/import": MAX_IMPORT_BYTES,
    "/backup/": MAX_IMPORT_BYTES,
    "/api/imports": MAX_CHAT_IMPORT_BYTES,
    "/imports/": MAX_CHAT_IMPORT_BYTES,
    "/api/files": TALORYS_MAX_FILE_BYTES + 64 * 1024,  # and the multipart's own lines
}
# Django's own check, for chunked bodies outside daphne: as large as the largest route limit.
DATA_UPLOAD_MAX_MEMORY_SIZE = max([MAX_BODY_BYTES, *BODY_LIMITS.values()])

# Every API list pages with limit/offset, both bounded (talorys/web/pagination.py).
NINJA_PAGINATION_CLASS = "talorys.web.pagination.Pagination"

# Security headers and the Content Security Policy.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        # No 'unsafe-inline' anywhere: pages load scripts and styles from our static files only.
        # The API docs need nothing more: with "ninja" installed, Swagger UI comes from ninja's
        # static files and its settings from a JSON data block, which CSP does not treat as script.
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],  # Swagger UI draws its icons as data: URLs
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    }
}

TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
# One way to show a time (talorys/lib/timefmt.py): "1 Dec 2026, 22:14", the admin included.
# The locale's formats win over these settings, so talorys/formats/en/ repeats them.
FORMAT_MODULE_PATH = ["talorys.formats"]
DATE_FORMAT = "j M Y"
TIME_FORMAT = "H:i"
DATETIME_FORMAT = "j M Y, H:i"
SHORT_DATE_FORMAT = "j M Y"
SHORT_DATETIME_FORMAT = "j M Y, H:i"

STORAGES = data_dir_storages(DATA_DIR)  # and "files", the owner's files (files/storage.py)
STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").exists() else []

# Model provider (owner settings in the database override these).
TALORYS_MODEL_BASE_URL = env_str("TALORYS_MODEL_BASE_URL")
TALORYS_MODEL = env_str("TALORYS_MODEL")
TALORYS_MODEL_API_KEY = env_str("TALORYS_MODEL_API_KEY")
TALORYS_EMBEDDINGS_BASE_URL = env_str("TALORYS_EMBEDDINGS_BASE_URL")
TALORYS_EMBEDDINGS_MODEL = env_str("TALORYS_EMBEDDINGS_MODEL")
TALORYS_EMBEDDINGS_API_KEY = env_str("TALORYS_EMBEDDINGS_API_KEY")
# Where the local embedder process listens (talorys_embedder, talorys/embedder/address.py):
# unset, the data dir's embedder.sock (talorys_run starts it there); ``unix:/path`` for another
# socket, or ``http://host:port`` (compose's embedder service).
TALORYS_EMBEDDER_URL = env_str("TALORYS_EMBEDDER_URL")
# A comment line on a chat SSE stream after this long without an event (proxies drop idle ones).
SSE_KEEPALIVE_SECONDS = env_float("TALORYS_SSE_KEEPALIVE_SECONDS", 15)
# Attaches (GET /api/conversations/{id}/stream) API tokens may hold open at once: each token, and
# all of them together; more answer 429 (agent/live/slots.py). The owner's session has no cap.
ATTACHES_PER_TOKEN = env_int("TALORYS_ATTACHES_PER_TOKEN", 8)
TOKEN_ATTACHES = env_int("TALORYS_TOKEN_ATTACHES", 32)
# "Your reply is ready" after a reply this long that ends with no page attached (live/ready.py).
TALORYS_REPLY_READY_SECONDS = env_float("TALORYS_REPLY_READY_SECONDS", 5)
# A /v1 request (same token and body) sent again this soon gets the first answer (replay.py).
TALORYS_V1_REPLAY_SECONDS = env_int("TALORYS_V1_REPLAY_SECONDS", 60)
# What one model step (text and tool-call arguments) and one reply may hold, in characters
# (max_tokens may be ignored), ~50,000 and 100,000 tokens: past either the turn ends, keeping it.
TALORYS_MAX_STEP_CHARS = env_int("TALORYS_MAX_STEP_CHARS", 200_000)
TALORYS_MAX_REPLY_CHARS = env_int("TALORYS_MAX_REPLY_CHARS", 400_000)
# The longest one model step (one streamed request) may take, in seconds, whatever the server
# sends meanwhile: keep-alive comments or a trickle reset the read timeout (120 s of silence),
# not this. Past it the turn ends with PROVIDER_TIMEOUT and keeps what came. 300 s lets a slow
# local model write a reply of max_output_tokens (1,024 by default) at 4 tokens a second.
TALORYS_MODEL_STEP_DEADLINE = env_float("TALORYS_MODEL_STEP_DEADLINE", 300)
if TALORYS_MODEL_STEP_DEADLINE < 1:
    raise ImproperlyConfigured(
        f"TALORYS_MODEL_STEP_DEADLINE={TALORYS_MODEL_STEP_DEADLINE:g}: use 1 second or more."
    )
# A chat turn's trips to the database run on this many threads of their own, at most the pool's
# size less one; 0: on the thread of every synchronous request (agent/runner/db.py says why).
TALORYS_TURN_DB_THREADS = env_int("TALORYS_TURN_DB_THREADS", 4)
# The memory conflict check's one JSON-mode call (memory/conflict.py): past this, both are kept.
TALORYS_CONFLICT_CHECK_SECONDS = env_float("TALORYS_CONFLICT_CHECK_SECONDS", 10)

# Plain lines, or one JSON object per line (TALORYS_LOG_JSON=1); each carries the request id and
# the turn id (talorys/lib/logs.py).
TALORYS_LOG_JSON = env_bool("TALORYS_LOG_JSON", False)
LOGGING = logging_config(json_lines=TALORYS_LOG_JSON, level=env_str("LOG_LEVEL", "INFO"))
# The worker and beat log through LOGGING too: Celery would otherwise replace the root handler.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CSRF_FAILURE_VIEW = "talorys.web.middleware.api_csrf_failure"
