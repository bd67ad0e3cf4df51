from django.apps import AppConfig


class HistoryConfig(AppConfig):
    """Nothing is lost: the bin and the change log, for every kind of item the owner keeps."""

    name = "talorys.history"
    label = "history"
    verbose_name = "History (the bin and the change log)"
