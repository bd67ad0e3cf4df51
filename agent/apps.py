from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"

    def ready(self) -> None:
        from agent import services  # noqa: F401  (registers conversations with the bin)
        from agent.selectors import message_recall_source
        from memory.recall.sources import register_source

        register_source(message_recall_source())
