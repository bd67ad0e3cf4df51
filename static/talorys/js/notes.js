// The note page's Preview without leaving the page: the draft goes to the preview view, which
// answers with the HTML talorys/lib/markdown.py made of it (sanitised by nh3 on the server, the
// same HTML a saved note shows). Without this script the button posts the form and the page
// comes back with the preview.
import { addCopyButtons } from "../common.js";
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
