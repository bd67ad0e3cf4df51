from django.apps import AppConfig


class FilesConfig(AppConfig):
    name = "files"
    verbose_name = "Files"

    def ready(self) -> None:
        from files import services, tools  # noqa: F401  (the bin's kind, the file tools)
        from files.selectors import file_recall_source
        from memory.recall.sources import register_source

        register_source(file_recall_source())
