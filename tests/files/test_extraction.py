"""Each accepted kind uploaded and read by the worker (the extraction child, for real): ready,
with its passages and their page or heading; each bad file ends failed with the reason the
owner reads."""

from __future__ import annotations

import pytest

from files.models import File
from tests.files.makers import docx_bomb, docx_file, encrypted_pdf, text_pdf

pytestmark = pytest.mark.django_db


def places(file: File) -> list[tuple[int | None, str, str]]:
    return [(p.page, p.heading, p.text) for p in file.passages.order_by("index")]


def test_a_pdf_is_read_page_by_page(upload):
    file = upload("report.pdf", text_pdf([["Budget overview"], ["The roof costs 4000 euros."]]))
    assert (file.status, file.content_type, file.pages) == ("ready", "application/pdf", 2)
    found = places(file)
    assert [page for page, _, _ in found] == [1, 2]
    assert "roof costs 4000" in found[1][2]


def test_a_word_document_is_read_under_its_headings_with_its_tables(upload):
    data = docx_file(
        [("Costs", ["The roof costs 4000 euros."]), ("Plan", ["Paint it blue."])],
        table=[["Item", "Price"], ["Paint", "120"]],
    )
    file = upload("plan.docx", data)
    assert file.status == "ready", file.reason
    found = places(file)
    assert [heading for _, heading, _ in found] == ["Costs", "Plan"]
    assert "roof costs" in found[0][2]
    assert "Paint | 120" in found[1][2]


def test_markdown_is_cut_at_its_headings_but_not_inside_code(upload):
    text = "Intro line.\n\n# Costs\n\nRoof: 4000.\n\n```\n# not a heading\n```\n\n## Plan\n\nBlue."
    file = upload("notes.md", text.encode())
    assert (file.status, file.content_type) == ("ready", "text/markdown")
    assert [heading for _, heading, _ in places(file)] == ["", "Costs", "Plan"]
    assert "# not a heading" in places(file)[1][2]


def test_html_is_read_as_its_visible_text_under_its_headings(upload):
    page = (
        b"<!doctype html><html><head><title>T</title><style>p{color:red}</style></head><body>"
        b"<h1>Costs</h1><p>The roof costs 4000.</p><script>alert(1)</script>"
        b"<h2>Plan</h2><p>Paint it blue.</p></body></html>"
    )
    file = upload("page.html", page)
    assert (file.status, file.content_type) == ("ready", "text/html")
    found = places(file)
    assert [heading for _, heading, _ in found] == ["Costs", "Plan"]
    assert "alert" not in " ".join(text for _, _, text in found)
    assert "color" not in " ".join(text for _, _, text in found)


def test_csv_rows_are_read_with_their_column_names(upload):
    file = upload("prices.csv", b"item,price\npaint,120\nroof,4000\n")
    assert (file.status, file.content_type) == ("ready", "text/csv")
    assert "item: roof; price: 4000" in places(file)[0][2]


def test_plain_text_and_long_text_in_passages(upload):
    paragraph = "word " * 400
    file = upload("long.txt", "\n\n".join([paragraph] * 5).encode("utf-8"))
    assert (file.status, file.content_type) == ("ready", "text/plain")
    assert len(places(file)) >= 5
    assert all(len(text) <= 1500 for _, _, text in places(file))
    assert file.text_chars > 9000


def test_an_image_is_stored_ready_with_no_text(upload):
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
    file = upload("photo.png", png)
    assert (file.status, file.content_type, file.passages.count()) == ("ready", "image/png", 0)


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("locked.pdf", encrypted_pdf([["Secret plans"]]), "This PDF is encrypted"),
        ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog", "This PDF is damaged"),
        ("scan.pdf", text_pdf([[]]), "no text to read"),
        ("bomb.docx", docx_bomb(), "zip bomb"),
    ],
)
def test_a_bad_file_ends_failed_with_the_reason(upload, name, data, reason):
    file = upload(name, data)
    assert file.status == "failed"
    assert reason in file.reason
    assert file.passages.count() == 0


def test_a_reading_past_the_time_budget_is_stopped(upload, settings):
    settings.TALORYS_FILE_EXTRACT_SECONDS = 0.001
    file = upload("report.pdf", text_pdf([["Budget"]]))
    assert file.status == "failed"
    assert "took longer than 0.001 seconds" in file.reason


def test_a_reading_past_the_memory_budget_fails(upload, settings):
    # The child starts in about 13 MiB of address space; pypdf alone takes 30 more.
    settings.TALORYS_FILE_EXTRACT_MEMORY_BYTES = 32 * 1024 * 1024
    file = upload("report.pdf", text_pdf([["Budget"]]))
    assert file.status == "failed"
    assert file.reason.startswith(("Reading this file needed more memory", "The file could not"))


def test_an_extraction_sent_twice_changes_nothing(upload):
    from files.services import file_extract

    file = upload("notes.md", b"# A\n\nText.")
    assert file_extract(file_id=file.pk) is None
    assert file.passages.count() == 1


def test_a_file_left_pending_is_read_when_a_worker_starts(db, eager):
    import io

    from files.services import file_create
    from files.tasks import extract_pending

    file = file_create(name="notes.md", stream=io.BytesIO(b"# A\n\nText."))  # never sent
    assert extract_pending() == 1
    file.refresh_from_db()
    assert file.status == "ready"
    assert extract_pending() == 0
