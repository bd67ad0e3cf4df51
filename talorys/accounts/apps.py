from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class AccountsConfig(AppConfig):
    name = "talorys.accounts"
    label = "accounts"
    verbose_name = "Accounts"


class OwnerAdminConfig(admin_apps.AdminConfig):
    # The owner is a superuser: the admin's login must share the owner's login throttle.
    default_site = "talorys.accounts.sites.OwnerAdminSite"
    default = False  # only where settings name it; this app itself is AccountsConfig
