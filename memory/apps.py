from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self) -> None:
        from memory import tools  # noqa: F401  (registers the memory tools)
        from memory.selectors import memory_search_hits
        from talorys.lib.search import register_searcher

        register_searcher("memories", memory_search_hits)
