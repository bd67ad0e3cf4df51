// The head of the chat's thread: the conversation's title, renamed in place (PATCH), and
// Delete, which moves the conversation to the bin (with an Undo toast). Titles go in with textContent.
import { api, undoToast } from "../common.js";

const $ = (id) => document.getElementById(id);
const heading = $("thread-title");
const actions = $("thread-actions");
const form = $("rename-form");
const field = $("rename-input");
const status = $("status");
let id = null;
let title = "";
let onDeleted = () => {};
let onRenamed = () => {};
let onRestored = () => {};

function show() {
  heading.textContent = id ? title || `Conversation ${id}` : "New chat";
  document.title = `${id && title ? title : "Chat"} · Talorys`;
  actions.hidden = !id;
  form.hidden = true;
  heading.hidden = false;
}

function set(nextId, nextTitle) {
  const editing = !form.hidden && nextId === id;
  id = nextId;
  title = nextTitle || "";
  if (!editing) show(); // a generated title arriving mid-rename does not close the form
}

$("rename").addEventListener("click", () => {
  field.value = title;
  heading.hidden = true;
  actions.hidden = true;
  form.hidden = false;
  field.select();
});
$("rename-cancel").addEventListener("click", () => { show(); $("rename").focus(); });
field.addEventListener("keydown", (e) => {
  if (e.key === "Escape") { e.preventDefault(); show(); $("rename").focus(); }
});
form.addEventListener("submit", async (e) => {
  e.preventDefault();
  const renamed = id;
  try {
    const saved = await api(`/api/conversations/${renamed}`, { method: "PATCH", body: { title: field.value.trim() } });
    if (renamed === id) { title = saved.title; show(); $("rename").focus(); }
    status.textContent = "";
    onRenamed(renamed);
  } catch (err) {
    status.textContent = err.message;
  }
});
$("delete").addEventListener("click", async () => {
  if (!window.confirm("Move this conversation to the bin? You can restore it from the bin.")) return;
  const deleted = id;
  try {
    await api(`/api/conversations/${deleted}`, { method: "DELETE" });
    onDeleted(deleted);
    status.textContent = "";
    undoToast("Conversation moved to the bin", { kind: "conversation", id: deleted, onRestored: () => onRestored(deleted) });
  } catch (err) {
    status.textContent = err.message;
  }
});

export const head = {
  init(options) {
    onDeleted = options.onDeleted;
    onRenamed = options.onRenamed;
    onRestored = options.onRestored;
  },
  set,
  title: () => title,
};
