from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self) -> None:
        from memory import tools  # noqa: F401  (registers the memory and search tools)
        from memory.recall.sources import register_source
        from memory.sources import memory_sources

        for source in memory_sources():
            register_source(source)
