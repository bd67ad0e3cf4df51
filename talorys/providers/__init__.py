"""Model clients (chat and embeddings' wire formats): below every app that uses them.

Which model a turn uses is the owner's choice (talorys.owner.selectors.provider_config: the
owner's settings over the environment); with no base URL or no model, the demo provider answers.
``provider_for`` picks the client for that config. No client retries: a failure is a
``ProviderError`` with a stable kind, shown to clients as ``PROVIDER_<KIND>`` (base.py).
"""

from __future__ import annotations

from talorys.providers.base import Provider, ProviderConfig
from talorys.providers.demo import DemoProvider
from talorys.providers.openai_compat import OpenAICompatProvider

__all__ = ["provider_for"]


def provider_for(config: ProviderConfig) -> Provider:
    """A fresh provider; the caller closes it with ``aclose()`` when the turn ends."""
    if config.is_demo:
        return DemoProvider()
    return OpenAICompatProvider(config)
