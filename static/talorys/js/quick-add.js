// What the tasks page's quick add and the task form's "Due in words" read in the words typed so
// far, shown under the field before anything is added (templates/workspace/tasks.html and
// tasks_detail.html). The server reads the words (understand.js, talorys/lib/when.py), with the
// same reader that then reads the form, so the hint and what is added agree.
//
// Quick add: once the hint shows for exactly the words in the field, the hidden "seen" field
// holds them, and the server adds at the first Enter. Without this script (or before the hint
// caught up) the server shows what it read first, and Add adds it (talorys/workspace/views/quick_add.py).
import { watch } from "./understand.js";

function setUpQuickAdd(form) {
  const input = document.getElementById("new-title");
  const hint = document.getElementById("new-title-hint");
  const row = document.getElementById("new-title-hint-row");
  const seen = document.getElementById("new-seen");
  const due = document.getElementById("new-due");
  if (!input || !hint || !row || !seen) return;
  const reread = watch(input, (text, body) => {
    // A date in the Due field wins: the words are then added as typed.
    const said = due && due.value ? "" : body.said || "";
    hint.textContent = said;
    row.hidden = !said;
    seen.value = said ? text : "";
  });
  if (due) due.addEventListener("input", reread);
}

function setUpDueWords(input) {
  const hint = document.getElementById(input.getAttribute("aria-describedby"));
  if (!hint) return;
  watch(input, (text, body) => {
    hint.textContent = text.trim() && !body.said ? "Not a date we can read yet." : body.said || "";
  });
}

const quick = document.getElementById("quick-add");
if (quick) setUpQuickAdd(quick);
const words = document.getElementById("task-due-words");
if (words) setUpDueWords(words);
