from django.apps import AppConfig


class BackupConfig(AppConfig):
    name = "backup"
    verbose_name = "Backup"
