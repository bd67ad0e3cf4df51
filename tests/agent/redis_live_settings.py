"""Settings for live daphnes that share one Redis, as the web processes of one install do.

tests/settings.py leaves REDIS_URL out (a test that wants Redis asks for it): a test that runs a
turn in one daphne and follows it from another (agent/live/mirror.py) passes its own Redis
database in TALORYS_TEST_LIVE_REDIS_URL. The cache and the channel layer are shared through it
as in production (a page's socket on one daphne hears what another sends to its group:
tests/agent/test_socket_processes.py); the broker stays the test one (no worker runs). agent.live logs at INFO, so a test can read in a daphne's log what it decided
where nothing else shows it (no "reply is ready" notice for a followed turn).
"""

import os

from tests.settings import *  # noqa: F403

REDIS_URL = os.environ["TALORYS_TEST_LIVE_REDIS_URL"]
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
}
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            "hosts": [{"address": REDIS_URL, "socket_timeout": REDIS_LAYER_READ_TIMEOUT}],  # noqa: F405
            "group_expiry": GROUP_EXPIRY,  # noqa: F405
        },
    }
}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"level": "WARNING", "handlers": ["console"]},
    "loggers": {"agent.live": {"level": "INFO"}},
}
