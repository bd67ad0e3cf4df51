from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class OwnerAdminConfig(admin_apps.AdminConfig):
    # The owner is a superuser: the admin's login must share the owner's login throttle.
    default_site = "talorys.security.OwnerAdminSite"
    default = False  # only where settings name it; "talorys" itself stays TalorysConfig


class TalorysConfig(AppConfig):
    name = "talorys"
    verbose_name = "Talorys core"

    def ready(self) -> None:
        from talorys import search
        from talorys import tools as _core_tools  # noqa: F401

        search._core_searchers()
        from talorys import owner_tools  # noqa: F401  (registers the core data tools)
