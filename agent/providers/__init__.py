"""Model providers: which one a turn uses, and how it is configured.

The environment (``TALORYS_MODEL_BASE_URL``, ``TALORYS_MODEL``, ``TALORYS_MODEL_API_KEY``) gives
the defaults; the owner's settings override them. With no base URL or no model, the demo
provider answers.
"""

from __future__ import annotations

from agent.providers.base import Provider, ProviderConfig
from agent.providers.demo import DemoProvider
from agent.providers.openai_compat import OpenAICompatProvider
from talorys.models import OwnerSettings
from talorys.selectors import model_endpoint

__all__ = ["provider_config", "provider_for"]


def provider_config(owner_settings: OwnerSettings) -> ProviderConfig:
    """The model choice for a turn (see talorys.selectors.model_endpoint for the rule)."""
    endpoint = model_endpoint(owner_settings=owner_settings)
    return ProviderConfig(
        base_url=endpoint.base_url, model=endpoint.model, api_key=endpoint.api_key
    )


def provider_for(config: ProviderConfig) -> Provider:
    """A fresh provider; the caller closes it with ``aclose()`` when the turn ends."""
    if config.is_demo:
        return DemoProvider()
    return OpenAICompatProvider(config)
