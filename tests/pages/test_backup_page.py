"""/backup/: until the backup API exists (issue 12) the page says what backup will do and
offers nothing that cannot work."""

from __future__ import annotations

from talorys.api import api
from tests.talorys.routes import api_operations


def test_the_page_says_backup_is_not_here_yet_and_offers_no_button(client, owner):
    client.force_login(owner)

    body = client.get("/backup/").content.decode()

    assert "cannot export or import a backup yet" in body
    main = body[body.index('<main id="main"') : body.index("</main>")]
    assert "<form" not in main and "<button" not in main
    assert "/api/backup/" not in main


def test_there_is_no_backup_api_for_the_page_to_offer_yet():
    # When this fails, the backup API has landed: give the page its Export and Import.
    assert not [path for _method, path in api_operations(api) if path.startswith("/api/backup")]


def test_the_page_is_the_owner_s_only(client, db):
    assert client.get("/backup/").status_code == 302
