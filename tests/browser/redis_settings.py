"""Settings for a live daphne whose channel layer is shared with the test process.

The channel layer of tests/settings.py lives in memory, one per process, so a notification sent
by the test process would never reach the page served by daphne. tests/browser/test_notifications.py
passes the Redis layer it also uses itself, as JSON in TALORYS_TEST_CHANNEL_LAYERS.
"""

import json
import os

from tests.settings import *  # noqa: F403

CHANNEL_LAYERS = json.loads(os.environ["TALORYS_TEST_CHANNEL_LAYERS"])
