from django.apps import AppConfig


class WorkspaceConfig(AppConfig):
    name = "talorys.workspace"
    label = "workspace"
    verbose_name = "Workspace"

    def ready(self) -> None:
        from talorys.workspace import tools  # noqa: F401  (registers the data tools and bin kinds)
