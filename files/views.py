"""The Files page (/files/): the owner's files with their state, where each was used, download
and delete (to the bin, with Undo); uploads go through POST /api/files from the page's script
(static/talorys/js/files.js), so the list grows without a reload. And /files/{id}/content, the
file for the browser with the session, where the chat's citations link (files_link)."""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from files import selectors
from files.responses import file_content_response
from talorys.lib.errors import NotFound
from talorys.web.pages import owner_page, page_of


@owner_page("GET")
def files_page(request: HttpRequest) -> HttpResponse:
    page = page_of(request, selectors.files_list())
    files = list(page.object_list)
    used = selectors.files_used_in(file_ids=[f.pk for f in files])
    rows = [{"file": f, "used_in": used[f.pk], "url": selectors.file_link(f.pk)} for f in files]
    return render(request, "files/list.html", {"page": page, "rows": rows})


@owner_page("GET")
def file_content_page(request: HttpRequest, file_id: int) -> FileResponse:
    try:
        file = selectors.file_get(file_id=file_id)
    except NotFound as err:  # the site's 404 page, as for any address with nothing there
        raise Http404(err.message) from err
    return file_content_response(file)
