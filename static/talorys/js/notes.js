// The note page's Preview without leaving the page: the draft goes to the preview view, which
// answers with the HTML talorys/lib/markdown.py made of it (sanitised by nh3 on the server, the
// same HTML a saved note shows). Without this script the button posts the form and the page
// comes back with the preview.
import { addCopyButtons, api } from "../common.js";
import { plainMessage } from "./wording.js";

function setUpPreview() {
  const form = document.getElementById("note-form");
  const button = document.getElementById("preview-button");
  const box = document.getElementById("preview");
  const body = document.getElementById("preview-body");
  const error = document.getElementById("preview-error");
  if (!form || !button || !box || !body || !error) return;

  button.addEventListener("click", async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      const response = await fetch(form.dataset.previewUrl, {
        method: "POST",
        body: new FormData(form), // carries the form's CSRF token
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      const answer = await response.json().catch(() => null);
      if (!response.ok || !answer || answer.error) {
        throw new Error(answer && answer.error ? plainMessage(answer.error.message) : response.statusText);
      }
      body.innerHTML = answer.html; // sanitised server-side (see above)
      addCopyButtons(box);
      error.hidden = true;
    } catch (err) {
      body.textContent = "";
      error.textContent = "No preview: " + err.message;
      error.hidden = false;
    } finally {
      box.hidden = false;
      button.disabled = false;
    }
  });
}

setUpPreview();

// A task list's checkboxes ("- [ ] cheese", rendered disabled by talorys/lib/tasklists.py) are
// enabled here, on the note's own page: ticking one asks the API to change that line, by the
// box's place in the note and the version the page shows, so a tick from a page the note has
// moved on from is refused (409) instead of landing on another line. A tick is an edit like any
// other: a new version, in the note's history.
function setUpTicks() {
  const body = document.getElementById("note-body");
  const status = document.getElementById("tick-status");
  if (!body || !status || !body.dataset.tasksUrl) return;
  const boxes = [...body.querySelectorAll("input.task-check")];
  const say = (text, isError) => {
    status.textContent = text;
    status.className = "tick-status " + (isError ? "error" : "muted");
    status.hidden = false;
  };
  boxes.forEach((box, index) => {
    box.disabled = false;
    box.addEventListener("change", async () => {
      const ticked = box.checked;
      const label = (box.closest("label") || box).textContent.trim();
      boxes.forEach((b) => { b.disabled = true; }); // one tick at a time, each from the last version
      try {
        const note = await api(body.dataset.tasksUrl + index, {
          method: "POST",
          body: { ticked, version: Number(body.dataset.version) },
        });
        body.dataset.version = String(note.version);
        keepEditFormCurrent(note);
        say(`${ticked ? "Ticked" : "Unticked"} “${label}”.`, false);
      } catch (err) {
        box.checked = !ticked;
        say(err.code === "CONFLICT"
          ? "Not saved: this note has changed since the page was opened (in another tab, or by the assistant). Reload the page to see the current note, then tick again."
          : `Not saved: ${err.message}`, true);
      } finally {
        boxes.forEach((b) => { b.disabled = false; });
      }
    });
  });
}

// The Edit form follows the tick when the owner has not typed in it: its text and version are
// the note's new ones. A draft the owner has started keeps its old version, so saving it is
// refused as stale (and kept) rather than silently undoing the tick.
function keepEditFormCurrent(note) {
  const area = document.getElementById("note-content");
  const version = document.querySelector('#note-form input[name="version"]');
  if (!area || !version || area.value !== area.defaultValue) return;
  area.value = note.content;
  area.defaultValue = note.content;
  version.value = String(note.version);
}

setUpTicks();
