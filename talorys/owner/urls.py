"""The owner's pages of their settings and usage."""

from django.urls import path

from talorys.owner.views import settings, usage

urlpatterns = [
    path("usage/", usage.usage_page, name="usage"),
    path("settings/", settings.settings_page, name="settings"),
]
