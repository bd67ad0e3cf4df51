// The automation form (templates/automations/form.html): show the fields the chosen kind of
// schedule needs, and the next runs of the schedule as the owner edits it. The server computes
// them (GET /automations/preview/, automations/views.py) so the page and the dispatcher agree.
import { el } from "../common.js";

function setUpForm(form) {
  const text = document.getElementById("preview-text");
  const runs = document.getElementById("preview-runs");
  const none = document.getElementById("preview-none");
  const error = document.getElementById("preview-error");
  const kindField = form.elements.namedItem("schedule_type");
  let timer = null;
  let asked = 0;

  function kind() {
    return kindField ? kindField.value : "";
  }

  // Only the fields of the chosen kind are shown; the others are kept, and ignored on save.
  function showFields() {
    form.querySelectorAll("[data-needs]").forEach((node) => {
      node.hidden = !node.dataset.needs.split(" ").includes(kind());
    });
  }

  function query() {
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(form)) {
      if (name.startsWith("schedule_")) params.append(name, value);
    }
    return params.toString();
  }

  function show(body) {
    runs.replaceChildren();
    (body.runs || []).forEach((run) => {
      const li = el("li");
      const time = el("time", "", run.label);
      time.setAttribute("datetime", run.at);
      li.appendChild(time);
      runs.appendChild(li);
    });
    text.textContent = body.text || "";
    text.hidden = !body.text;
    none.hidden = Boolean(body.runs && body.runs.length) || Boolean(body.errors);
    error.textContent = body.errors ? Object.values(body.errors).flat().join(" ") : "";
  }

  async function preview() {
    const mine = ++asked;
    try {
      const response = await fetch(`${form.dataset.preview}?${query()}`, {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      const body = await response.json();
      if (mine === asked) show(body);
    } catch (e) {
      if (mine === asked) show({ errors: { preview: ["The next runs could not be worked out just now."] } });
    }
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(preview, 250);
  }

  form.addEventListener("input", (e) => {
    if (e.target.name && e.target.name.startsWith("schedule_")) later();
  });
  form.addEventListener("change", (e) => {
    if (e.target === kindField) showFields();
    if (e.target.name && e.target.name.startsWith("schedule_")) later();
  });
  showFields();
}

const form = document.getElementById("automation-form");
if (form) setUpForm(form);
