from django.apps import AppConfig


class AutomationsConfig(AppConfig):
    name = "automations"
    verbose_name = "Automations"

    def ready(self) -> None:
        from automations import tools  # noqa: F401  (registers the automation tools)
        from automations.selectors import automation_recall_source
        from memory.recall.sources import register_source

        register_source(automation_recall_source())
