"""The owner's pages about the whole workspace: the bin, the model's changes, usage and settings
(each in its own module beside this one)."""

from django.urls import path

from talorys.workspace.views import bin as bin_views
from talorys.workspace.views import changes, settings, usage

urlpatterns = [
    path("bin/", bin_views.bin_page, name="bin"),
    path("changes/", changes.changes_page, name="changes"),
    path("usage/", usage.usage_page, name="usage"),
    path("settings/", settings.settings_page, name="settings"),
]
