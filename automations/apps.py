from django.apps import AppConfig


class AutomationsConfig(AppConfig):
    name = "automations"
    verbose_name = "Automations"

    def ready(self) -> None:
        from automations import tools  # noqa: F401  (registers the automation tools)
