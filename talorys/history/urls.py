"""The owner's pages of the history platform: the bin and the model's changes."""

from django.urls import path

from talorys.history.views import bin as bin_views
from talorys.history.views import changes

urlpatterns = [
    path("bin/", bin_views.bin_page, name="bin"),
    path("changes/", changes.changes_page, name="changes"),
]
