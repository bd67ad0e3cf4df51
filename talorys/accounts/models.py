"""The owner's API tokens (the owner is a Django user).

The table keeps the name it had in the talorys app (db_table)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A personal token for the owner's scripts. Only a SHA-256 of the secret is stored.

    A ``read`` token (the default) may only read; a ``write`` token may also create, change and
    delete to the bin. Neither may purge, decide approvals, or touch secrets and provider
    settings: those need the owner's session.
    """

    class Scope(models.TextChoices):
        READ = "read"
        WRITE = "write"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    NAME_MAX = 100  # read by the API's schema and api_token_create

    name = models.CharField(max_length=NAME_MAX)
    prefix = models.CharField(max_length=12, help_text="First characters, to tell tokens apart")
    token_hash = models.CharField(max_length=64, unique=True)
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.READ)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "talorys_apitoken"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
