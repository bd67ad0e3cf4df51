from django.apps import AppConfig


class TalorysConfig(AppConfig):
    name = "talorys"
    verbose_name = "Talorys core"

    def ready(self) -> None:
        from talorys import search
        from talorys import tools as _core_tools  # noqa: F401

        search._core_searchers()
        from talorys import owner_tools  # noqa: F401  (registers the core data tools)
