"""Talorys' platform: the lower apps every feature stands on, each a folder:
``notifications/``, ``workspace/``, ``history/`` and ``owner/``, ``accounts/``, ``ops/``,
``providers/``, ``embedder/``, then ``web/`` (request and response helpers) and ``lib/`` (pure
helpers), top to bottom. The features (agent, memory, approvals, automations, backup) sit beside
this package, and the wiring that mounts them all is ``config/``.

The ``talorys`` app itself holds no models: its migrations are the history of the models that
moved to talorys.accounts, talorys.workspace and talorys.notifications (their tables kept their
names). Imports point down only (pyproject.toml's import-linter contract).
"""
