"""/notifications/: every notification, unread marked, mark one or all read, a link to what it
is about."""

from __future__ import annotations

from talorys.notifications import services
from talorys.notifications.models import Notification


def test_unread_are_marked_and_a_notification_links_to_what_it_is_about(signed_in):
    services.notification_create(title="Waiting for your approval", source="approval:12")
    read = services.notification_create(title="Digest", body="Three tasks due")
    services.notification_mark_read(notification_id=read.pk)

    html = signed_in.get("/notifications/").content.decode()

    assert '<a href="/approvals/#approval-12">Waiting for your approval</a>' in html
    assert html.count('class="notification-item unread"') == 1
    assert "Three tasks due" in html
    unread_only = signed_in.get("/notifications/?show=unread").content.decode()
    assert "Waiting for your approval" in unread_only and "Digest" not in unread_only


def test_mark_one_read(signed_in):
    one = services.notification_create(title="One")
    other = services.notification_create(title="Other")

    response = signed_in.post(f"/notifications/{one.pk}/read/", follow=True)

    assert "Marked as read." in response.content.decode()
    assert Notification.objects.get(pk=one.pk).read_at is not None
    assert Notification.objects.get(pk=other.pk).read_at is None


def test_mark_all_read_on_the_page_and_in_the_api(signed_in, api):
    for n in range(3):
        services.notification_create(title=f"n{n}")

    response = signed_in.post("/notifications/read-all/", follow=True)

    assert "3 marked as read." in response.content.decode()
    assert Notification.objects.filter(read_at__isnull=True).count() == 0
    services.notification_create(title="later")
    assert api.post("/api/notifications/read-all").json() == {"marked": 1}
    assert Notification.objects.filter(read_at__isnull=True).count() == 0


def test_unknown_notification_is_a_clear_message(signed_in, db):
    response = signed_in.post("/notifications/999999/read/", follow=True)
    assert "Notification 999999 does not exist." in response.content.decode()


def test_the_page_reads_a_fixed_number_of_queries(signed_in, django_assert_max_num_queries):
    Notification.objects.bulk_create(
        [Notification(title=f"n{n}", source=f"approval:{n}") for n in range(2000)]
    )
    signed_in.get("/notifications/")  # the owner's settings row is made on the first page
    for path in ("/notifications/", "/notifications/?show=unread", "/notifications/?page=7"):
        with django_assert_max_num_queries(6):  # 6: the receipts of the owner's channels
            assert signed_in.get(path).status_code == 200
