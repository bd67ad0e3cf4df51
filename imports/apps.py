from django.apps import AppConfig


class ImportsConfig(AppConfig):
    name = "imports"
    verbose_name = "Imports"

    def ready(self) -> None:
        from imports import services  # noqa: F401  (registers imports with the bin and the log)
