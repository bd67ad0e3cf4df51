// The model picker in the chat's head: the models GET /api/models lists (read once per page),
// "Default (…)" first; choosing one PATCHes the conversation, whose next replies ask it. Shown
// only when there is a choice; model names go in with textContent.
import { api, el } from "../common.js";

const $ = (id) => document.getElementById(id);
const box = $("model-pick");
const select = $("model-select");
const status = $("status");
let listing = null; // the promise of /api/models' answer
let id = null;
let model = ""; // the open conversation's ("" for the default)
let onChanged = () => {};

function choices() {
  listing = listing || api("/api/models").catch(() => null);
  return listing;
}

async function show() {
  const shown = id;
  const listed = await choices();
  if (shown !== id) return;
  if (!id || !listed) { box.hidden = true; return; }
  const others = listed.models.filter((name) => name !== listed.default);
  if (model && !others.includes(model)) others.push(model); // no longer listed: still shown
  const fallback = el("option", "", `Default (${listed.default})`);
  fallback.value = "";
  const options = others.map((name) => {
    const option = el("option", "", name);
    option.value = name;
    return option;
  });
  select.replaceChildren(fallback, ...options);
  select.value = model;
  select.title = listed.available ? `Model: ${select.selectedOptions[0].textContent}` : `The model list could not be read: ${listed.problem}`;
  box.hidden = options.length === 0;
}

function set(nextId, nextModel) {
  id = nextId;
  model = nextModel || "";
  show();
}

select.addEventListener("change", async () => {
  const chosen = id;
  try {
    const saved = await api(`/api/conversations/${chosen}`, { method: "PATCH", body: { model: select.value || null } });
    if (chosen === id) set(id, saved.model);
    status.textContent = "";
    onChanged(chosen);
  } catch (err) {
    if (chosen === id) select.value = model;
    status.textContent = err.message;
  }
});

export const picker = {
  init(options) { onChanged = options.onChanged; },
  set,
};
