from django.urls import path

from approvals import views

urlpatterns = [
    path("approvals/", views.approvals_page, name="approvals"),
    *(
        path(
            f"approvals/<int:action_id>/{decision}/",
            views.approval_decide,
            {"decision": decision},
            name=f"approval-{decision}",
        )
        for decision in views.DECISIONS
    ),
]
