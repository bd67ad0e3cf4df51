from django.apps import AppConfig


class OwnerConfig(AppConfig):
    """The owner's settings (time zone, model provider, budgets, quiet hours) and usage."""

    name = "talorys.owner"
    label = "owner"
    verbose_name = "Owner settings and usage"

    def ready(self) -> None:
        from talorys.lib.tools import register_zone_reader
        from talorys.owner.selectors import owner_zone

        # Every tool shows times in the owner's zone (``ToolContext.zone``, read at most once
        # per call), which these settings hold; talorys.lib imports no app, so it is told here.
        register_zone_reader(owner_zone)
