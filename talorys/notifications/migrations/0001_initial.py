"""Notifications and Web Push move here from the talorys app, keeping their tables."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("talorys", "0004_change_log"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist already (made by the talorys app): only the state moves.
            state_operations=[
                migrations.CreateModel(
                    name="PushSubscription",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("endpoint", models.CharField(max_length=2000, unique=True)),
                        (
                            "p256dh",
                            models.CharField(
                                help_text="The browser's public key (base64url)", max_length=200
                            ),
                        ),
                        (
                            "auth",
                            models.CharField(
                                help_text="The browser's auth secret (base64url)", max_length=100
                            ),
                        ),
                        ("user_agent", models.CharField(blank=True, default="", max_length=300)),
                        ("active", models.BooleanField(default=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("last_success_at", models.DateTimeField(blank=True, null=True)),
                        ("deactivated_at", models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        "db_table": "talorys_pushsubscription",
                        "ordering": ["-created_at", "-id"],
                    },
                ),
                migrations.CreateModel(
                    name="Notification",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("title", models.CharField(max_length=300)),
                        ("body", models.TextField(blank=True, default="")),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("info", "Info"),
                                    ("reminder", "Reminder"),
                                    ("digest", "Digest"),
                                    ("automation", "Automation"),
                                    ("approval", "Approval"),
                                    ("error", "Error"),
                                ],
                                default="info",
                                max_length=16,
                            ),
                        ),
                        ("source", models.CharField(blank=True, default="", max_length=100)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("read_at", models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        "db_table": "talorys_notification",
                        "ordering": ["-created_at", "-id"],
                        "indexes": [
                            models.Index(
                                fields=["read_at", "-created_at"],
                                name="talorys_not_read_at_bbca16_idx",
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="PushDelivery",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "Pending"),
                                    ("held", "Held"),
                                    ("sending", "Sending"),
                                    ("sent", "Sent"),
                                    ("failed", "Failed"),
                                    ("gone", "Gone"),
                                ],
                                default="pending",
                                max_length=8,
                            ),
                        ),
                        ("not_before", models.DateTimeField()),
                        ("attempts", models.PositiveSmallIntegerField(default=0)),
                        ("status_code", models.PositiveSmallIntegerField(blank=True, null=True)),
                        ("error", models.TextField(blank=True, default="")),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("sent_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "notification",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="push_deliveries",
                                to="notifications.notification",
                            ),
                        ),
                        (
                            "subscription",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="deliveries",
                                to="notifications.pushsubscription",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name_plural": "push deliveries",
                        "db_table": "talorys_pushdelivery",
                        "ordering": ["-created_at", "-id"],
                        "indexes": [
                            models.Index(
                                fields=["status", "not_before"],
                                name="talorys_pus_status_74a962_idx",
                            )
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("notification", "subscription"), name="push_delivery_once"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
