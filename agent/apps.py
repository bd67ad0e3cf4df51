from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"

    def ready(self) -> None:
        from agent import services  # noqa: F401  (registers conversations with the bin)
