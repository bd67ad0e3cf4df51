"""Talorys: the project package.

Two things live here, and the folders say which is which:

- The wiring, at the top layer: ``settings.py``, ``urls.py``, ``api.py`` (the one NinjaAPI),
  ``asgi.py``, ``celery.py``, ``openapi.py``, ``management/`` (talorys_run, talorys_setup) and
  ``migrations/`` (the history of models that moved out). It mounts every app, above and below.
- The lower apps, each a folder: ``notifications/``, ``workspace/``, ``history/`` and
  ``owner/``, ``accounts/``, ``ops/``, ``providers/``, ``lib/`` (top to bottom). The apps
  above them (agent, memory, approvals, automations, backup) sit beside this package.

Imports point down only; pyproject.toml's import-linter contract lists the layers and
README.md's "How it fits together" draws them.
"""

from talorys.celery import app as celery_app

__all__ = ["celery_app"]
