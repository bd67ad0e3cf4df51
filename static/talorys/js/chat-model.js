// The model picker in the chat's head: the models GET /api/models lists (read once per page),
// "Default (…)" first. In an open conversation, choosing one PATCHes it and its next replies ask
// it; in a new chat, the choice goes with the first message (chat.js: `chosen()`). Shown only
// when there is a choice; model names go in with textContent. The header's badge (base.html)
// names the open conversation's model, or the default's (its data-default) for one on the default.
import { api, el } from "../common.js";

const $ = (id) => document.getElementById(id);
const box = $("model-pick");
const select = $("model-select");
const status = $("status");
const badge = $("model-badge"); // absent where no model is set up
let listing = null; // the promise of /api/models' answer
let id = null; // the open conversation (null: a new chat)
let model = ""; // its model, or a new chat's choice ("" for the default)
let onChanged = () => {};

function choices() {
  listing = listing || api("/api/models").catch(() => null);
  return listing;
}

async function show() {
  const shown = id;
  const listed = await choices();
  if (shown !== id || id === undefined) return;
  if (!listed) { box.hidden = true; return; }
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

// A conversation and its model; `set(null)` is a new chat, on the default.
function set(nextId, nextModel) {
  id = nextId;
  model = nextModel || "";
  showBadge();
  show();
}

function showBadge() {
  if (badge) badge.textContent = model || badge.dataset.default;
}

// While a conversation loads: nothing to choose for yet.
function hide() {
  id = undefined;
  box.hidden = true;
}

select.addEventListener("change", async () => {
  if (id === null) { model = select.value; showBadge(); show(); return; } // sent with the first message
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
  hide,
  chosen: () => model || null,
};
