// Keyboard shortcuts on every signed-in page (base.html), listed by `?` in a dialog:
//   ?            this list            n        a new chat
//   Ctrl/Cmd+K   search               q        quick add a task
//   [ or Alt+↑   the conversation above, ] or Alt+↓ the one below (the chat page)
// None fires while the owner types in a field (input, textarea, select, contenteditable), but
// Ctrl/Cmd+K, which is no character; Esc closes the dialogs (the browser's own <dialog>).
// `q` opens a small dialog that posts to /api/tasks/quick, so a task is added without leaving the
// page (a chat mid-reply, a half-read note); on /tasks/ it focuses the page's own quick add. It
// reads dates as the tasks page does ("pick up parcel friday 5pm" is due then): a hint says what
// it read before adding, and Enter before the hint caught up shows it first (understand.js).
import { api, el } from "../common.js";
import { understand, watch } from "./understand.js";

const $ = (id) => document.getElementById(id);
const SHORTCUTS = [
  ["?", "Show these shortcuts"],
  ["n", "New chat"],
  ["Ctrl K / ⌘ K", "Search (conversations on the chat, the page's search elsewhere)"],
  ["q", "Quick add a task"],
  ["[ or Alt ↑", "The conversation above (chat)"],
  ["] or Alt ↓", "The conversation below (chat)"],
  ["Esc", "Close a dialog or the menu"],
];

function typing(target) {
  if (!(target instanceof Element)) return false;
  return target.isContentEditable || target.matches("input, textarea, select");
}

// A modal <dialog> with a heading and a Close button; the browser traps the focus and Esc.
function dialog(id, title) {
  const box = el("dialog", "dialog");
  box.id = id;
  box.setAttribute("aria-labelledby", `${id}-title`);
  const head = el("div", "dialog-head");
  const heading = el("h2", "", title);
  heading.id = `${id}-title`;
  const close = el("button", "secondary small", "Close");
  close.type = "button";
  close.addEventListener("click", () => box.close());
  head.append(heading, close);
  box.append(head);
  document.body.append(box);
  return box;
}

let sheet = null;
function showSheet() {
  if (!sheet) {
    sheet = dialog("shortcut-sheet", "Keyboard shortcuts");
    const list = el("dl", "shortcuts");
    for (const [keys, what] of SHORTCUTS) list.append(el("dt", "", keys), el("dd", "", what));
    sheet.append(list);
  }
  sheet.showModal();
}

// --- q: quick add a task -----------------------------------------------------------------------

let adder = null;

// The hint for a reading, as the dialog adds it (a repeating phrase adds a repeating task).
function hintOf(body) {
  if (!body || !body.said) return "";
  return body.said;
}

function quickAddDialog() {
  const box = dialog("quick-task", "Quick add a task");
  const form = el("form", "stack");
  const label = el("label", "", "Task");
  const field = el("input");
  field.name = "text";
  field.required = true;
  field.autocomplete = "off";
  field.placeholder = "e.g. pick up parcel friday 5pm";
  field.id = "quick-task-text";
  label.append(field);
  const hint = el("p", "hint");
  hint.id = "quick-task-hint";
  hint.setAttribute("aria-live", "polite");
  field.setAttribute("aria-describedby", hint.id);
  const problem = el("p", "error");
  problem.setAttribute("role", "alert");
  const row = el("div", "row");
  const add = el("button", "", "Add task");
  add.type = "submit";
  const more = el("a", "", "Project, details: the Tasks page");
  more.href = "/tasks/";
  row.append(add, more);
  form.append(label, hint, problem, row);
  let shownFor = null; // the words the hint says what was read in
  const show = (text, body) => {
    hint.textContent = hintOf(body);
    shownFor = text;
  };
  watch(field, show);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    add.disabled = true;
    try {
      const text = field.value;
      if (shownFor !== text) {
        const body = await understand(text);
        show(text, body);
        if (body && body.said) return; // shown first: Enter again adds it
      }
      const task = await api("/api/tasks/quick", { method: "POST", body: { text: text.trim() } });
      box.close();
      field.value = "";
      hint.textContent = "";
      shownFor = null;
      problem.textContent = "";
      added(task);
    } catch (err) {
      problem.textContent = err.message; // what was typed stays
      field.focus();
    } finally {
      add.disabled = false;
    }
  });
  box.append(form);
  return box;
}

function added(task) {
  const toasts = $("toasts");
  if (!toasts) return;
  const toast = el("div", "toast");
  toast.setAttribute("role", "status");
  const said = task.read && task.read.said ? `, ${task.read.said[0].toLowerCase()}${task.read.said.slice(1)}` : "";
  const link = el("a", "", `Task “${task.title}” added${said}.`);
  link.href = `/tasks/${Number(task.id)}/`;
  toast.append(link);
  toasts.append(toast);
  setTimeout(() => toast.remove(), 6000);
}

function quickAdd() {
  const own = $("new-title"); // /tasks/ has its own quick add, with the due date and project
  if (own) {
    own.scrollIntoView({ block: "center" });
    own.focus();
    return;
  }
  adder = adder || quickAddDialog();
  adder.showModal();
  adder.querySelector("input").focus();
}

// --- search, new chat, next conversation -------------------------------------------------------

function focusSearch() {
  const chatSearch = $("conversation-search");
  if (chatSearch) {
    const toggle = $("drawer-toggle"); // a phone: the list is in a drawer
    if (toggle && toggle.offsetParent !== null && toggle.getAttribute("aria-expanded") !== "true") toggle.click();
    chatSearch.focus();
    chatSearch.select();
    return;
  }
  const search = document.querySelector("main input[type=search]");
  if (!search) {
    location.assign("/#search"); // no search here: the conversations'
    return;
  }
  const fold = search.closest("details");
  if (fold) fold.open = true;
  search.focus();
  search.select();
}

function newChat() {
  const button = $("new-chat");
  if (button) button.click();
  else location.assign("/");
}

function stepConversation(by) {
  const links = [...document.querySelectorAll("#conversation-list a.conversation")];
  if (!links.length) return;
  const at = links.findIndex((a) => a.getAttribute("aria-current") === "page");
  const next = at === -1 ? (by > 0 ? 0 : links.length - 1) : at + by;
  if (next < 0 || next >= links.length) return;
  links[next].click();
  links[next].focus();
}

// --- the keys ------------------------------------------------------------------------------------

function action(e) {
  if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "k") return focusSearch;
  if (typing(e.target) || document.querySelector("dialog[open]")) return null;
  if (e.altKey && !e.ctrlKey && !e.metaKey && $("conversation-list")) {
    if (e.key === "ArrowUp") return () => stepConversation(-1);
    if (e.key === "ArrowDown") return () => stepConversation(1);
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  const keys = { "?": showSheet, n: newChat, q: quickAdd };
  if ($("conversation-list")) Object.assign(keys, { "[": () => stepConversation(-1), "]": () => stepConversation(1) });
  return keys[e.key] || null;
}

document.addEventListener("keydown", (e) => {
  if (e.defaultPrevented || e.isComposing) return;
  const run = action(e);
  if (!run) return;
  e.preventDefault();
  run();
});

// Ctrl/Cmd+K on a page without a search brings the owner here, to the conversations' search.
if (location.hash === "#search" && $("conversation-search")) {
  window.addEventListener("load", () => {
    history.replaceState(history.state, "", location.pathname + location.search);
    focusSearch();
  });
}
