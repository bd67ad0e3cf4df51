from django.apps import AppConfig


class OwnerConfig(AppConfig):
    """The owner's settings (time zone, model provider, budgets, quiet hours) and usage."""

    name = "talorys.owner"
    label = "owner"
    verbose_name = "Owner settings and usage"
