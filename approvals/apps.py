from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"

    def ready(self) -> None:
        # The push of an approval's notification carries its Approve and Reject actions.
        # Notifications sit below approvals and cannot import it: approvals registers.
        from approvals.push_decision import push_extra
        from talorys.notifications.push import register_payload_extra

        register_payload_extra("approval", push_extra)
