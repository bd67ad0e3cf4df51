"""The owner's automation pages (automations/views.py)."""

from django.urls import path

from automations import views

urlpatterns = [
    # No session: a calendar app fetches it; the secret in the path is the capability.
    path("calendar/<str:secret>.ics", views.calendar_feed, name="calendar-feed"),
    path("automations/", views.automation_list, name="automations"),
    path("automations/new/", views.automation_new, name="automation-new"),
    path("automations/preview/", views.schedule_preview, name="automation-preview"),
    path("automations/<int:automation_id>/", views.automation_detail, name="automation"),
    path("automations/<int:automation_id>/edit/", views.automation_edit, name="automation-edit"),
    # Pause, resume and delete: one view, told which by the path.
    *(
        path(
            f"automations/<int:automation_id>/{action}/",
            views.automation_action,
            {"action": action},
            name=f"automation-{action}",
        )
        for action in views.ACTIONS
    ),
]
