"""/files/: the owner's files with their state (a failed one's reason), the conversations that
used each, and /files/{id}/content, the file for the browser with the session (inline only for
a PDF or an image, never sniffed), where the chat's citations link."""

from __future__ import annotations

from agent.models import Conversation, Message
from files import services
from tests.files.makers import text_pdf


def test_the_list_shows_each_file_its_state_and_where_it_was_used(signed_in, upload):
    report = upload("report.pdf", text_pdf([["Sales grew."]]))
    broken = upload("broken.pdf", b"%PDF-1.4\nnot really a pdf\n%%EOF\n")
    used = Conversation.objects.create(title="Quarterly numbers")
    message = Message.objects.create(conversation=used, role=Message.Role.USER, content="?")
    message.attachments.add(report)

    page = signed_in.get("/files/").content.decode()

    assert "report.pdf" in page and "ready" in page
    assert f'<a href="/c/{used.pk}/">Quarterly numbers</a>' in page
    assert "broken.pdf" in page and "could not be read" in page and broken.reason in page
    assert f'href="/files/{report.pk}/content"' in page


def test_the_content_route_serves_the_file_as_the_api_does(signed_in, client, upload):
    report = upload("report.pdf", text_pdf([["Sales grew."]]))
    page = upload("page.txt", b"<html><script>alert(1)</script></html>\n")

    pdf = signed_in.get(f"/files/{report.pk}/content")
    text = signed_in.get(f"/files/{page.pk}/content")

    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert pdf["X-Content-Type-Options"] == "nosniff"
    assert not pdf["Content-Disposition"].startswith("attachment")
    assert text["Content-Disposition"].startswith("attachment")
    assert b"".join(pdf.streaming_content).startswith(b"%PDF")


def test_a_binned_or_unknown_file_is_not_served_and_a_stranger_is_sent_to_log_in(signed_in, upload):
    report = upload("report.pdf", text_pdf([["Sales grew."]]))
    services.file_delete(file_id=report.pk)

    assert signed_in.get(f"/files/{report.pk}/content").status_code == 404
    assert signed_in.get("/files/999999/content").status_code == 404
    signed_in.logout()
    assert signed_in.get("/files/").status_code == 302
