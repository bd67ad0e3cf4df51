from django.apps import AppConfig


class WiringConfig(AppConfig):
    """Installed so Django finds the management commands (``config/management/commands``)."""

    name = "config"
    verbose_name = "Talorys wiring"
