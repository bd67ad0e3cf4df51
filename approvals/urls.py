from django.urls import path

from approvals import views

urlpatterns = [
    path("approvals/", views.approvals_page, name="approvals"),
    path("approvals/<int:action_id>/approve/", views.approval_approve, name="approval-approve"),
    path("approvals/<int:action_id>/reject/", views.approval_reject, name="approval-reject"),
    path("approvals/<int:action_id>/undo/", views.approval_undo, name="approval-undo"),
]
