from django.apps import AppConfig


class TalorysConfig(AppConfig):
    """The project package. It holds no models any more: its migrations are the history of the
    models that moved to talorys.accounts, talorys.workspace and talorys.notifications (their
    tables kept their names), and its commands start and set up the whole project."""

    name = "talorys"
    verbose_name = "Talorys"
