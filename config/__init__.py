"""The wiring, the top layer: settings, the URL map and the one NinjaAPI (``api.py``), the ASGI
app, the Celery app, the MCP server and the management commands (``talorys_run``,
``talorys_setup``). It mounts every app; nothing imports it but Django, Celery and the tests.

Importing it loads the Celery app, so that every ``@shared_task`` binds to it (the worker is
``celery -A config``).
"""

from config.celery import app as celery_app

__all__ = ["celery_app"]
