from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "talorys.notifications"
    label = "notifications"
    verbose_name = "Notifications"

    def ready(self) -> None:
        from talorys.notifications import tools  # noqa: F401  (registers the notification tools)
