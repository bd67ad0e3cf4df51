from django.apps import AppConfig


class TalorysConfig(AppConfig):
    """The platform package. It holds no models any more: its migrations are the history of the
    models that moved to talorys.accounts, talorys.workspace and talorys.notifications (their
    tables kept their names); its template tags serve every page."""

    name = "talorys"
    verbose_name = "Talorys"
