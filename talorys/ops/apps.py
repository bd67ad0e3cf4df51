from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "talorys.ops"
    label = "ops"
    verbose_name = "Operations"
