// The import page (imports/views.py): the chosen file is previewed through the API's dry run,
// then sent again to be imported; the page then reloads to list it.
import { csrf, el } from "../common.js";

const form = document.getElementById("import-form");
const input = document.getElementById("import-file");
const preview = document.getElementById("import-preview");
const status = document.getElementById("import-status");
const apply = document.getElementById("import-apply");

async function send(dryRun) {
  const body = new FormData();
  body.append("file", input.files[0]);
  const response = await fetch(`/api/imports${dryRun ? "?dry_run=true" : ""}`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "X-CSRFToken": csrf() },
    body,
  });
  const answer = await response.json().catch(() => null);
  if (!response.ok) {
    throw new Error(answer && answer.error ? answer.error.message : response.statusText);
  }
  return answer;
}

function list(id, lines) {
  const node = document.getElementById(id);
  node.replaceChildren(...lines.map((line) => el("li", "", line)));
}

function show(report) {
  document.getElementById("import-kind").textContent = report.kind;
  const c = report.counts;
  list("import-counts", [
    `In the file: ${c.conversations} conversations, ${c.messages} messages, ${c.notes} notes, ${c.attachments} attachments.`,
    `Would add: ${report.added.conversations} conversations, ${report.added.messages} messages, ${report.added.notes} notes.`,
    `Already here: ${report.here.conversations} conversations, ${report.here.notes} notes.`,
  ]);
  list("import-first", report.first);
  list("import-lines", report.lines);
  preview.hidden = false;
  apply.disabled = !Object.values(report.added).some((n) => n > 0);
}

form?.addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!input.files.length) return;
  status.textContent = "Reading the file…";
  preview.hidden = true;
  try {
    show(await send(true));
    status.textContent = "Nothing has changed yet.";
  } catch (error) {
    status.textContent = error.message;
  }
});

input?.addEventListener("change", () => {
  preview.hidden = true;
  status.textContent = "";
});

apply?.addEventListener("click", async () => {
  apply.disabled = true;
  status.textContent = "Importing…";
  try {
    const report = await send(false);
    status.textContent = `Imported ${report.added.conversations} conversations and ${report.added.notes} notes.`;
    window.location.reload();
  } catch (error) {
    status.textContent = error.message;
    apply.disabled = false;
  }
});
