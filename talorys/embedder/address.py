"""Where the embedder process listens (settings.TALORYS_EMBEDDER_URL), for it and its clients."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

SOCKET_NAME = "embedder.sock"


@dataclass(frozen=True)
class EmbedderAddress:
    """Where the embedder process listens: a Unix socket (``socket``) or a TCP ``url``."""

    url: str  # the HTTP base, e.g. http://embedder:8001 (for a socket: a placeholder host)
    socket: Path | None = None

    def __str__(self) -> str:
        return f"unix:{self.socket}" if self.socket is not None else self.url


def embedder_address() -> EmbedderAddress:
    """settings.TALORYS_EMBEDDER_URL: ``http://host:port``, or ``unix:/path`` for a socket;
    unset, the data dir's ``embedder.sock`` (talorys_run starts the process there)."""
    configured = settings.TALORYS_EMBEDDER_URL.strip()
    if configured.startswith("unix:"):
        return EmbedderAddress("http://embedder", Path(configured.removeprefix("unix:")))
    if configured:
        return EmbedderAddress(configured.rstrip("/"))
    return EmbedderAddress("http://embedder", Path(settings.DATA_DIR) / SOCKET_NAME)
