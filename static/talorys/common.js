// Helpers shared by the owner pages' scripts, and the header: the menu drawer, the theme
// toggle, copy buttons on code. An ES module (base.html loads it on every page): a page's script
// imports what it uses from here, and the header is set up once, however many import it.
import { plainMessage } from "./js/wording.js";

import { refreshTimes } from "./js/time.js";

export function csrf() {
  const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

// JSON to and from /api/ with the session cookie and the CSRF header; an error answer
// becomes an Error carrying the envelope's message in plain words (js/wording.js: a field as
// the page would label it), its code (for the script, not for the owner) and details (a 422's
// fields); `raw` is the envelope's message as the API said it.
export async function api(path, options = {}) {
  const { labels, ...rest } = options;
  const init = { credentials: "same-origin", headers: { "X-CSRFToken": csrf() }, ...rest };
  if (init.body && typeof init.body !== "string") {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(init.body);
  }
  const response = await fetch(path, init);
  const body = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) {
    const raw = body && body.error ? body.error.message : response.statusText;
    const err = new Error(plainMessage(raw, labels));
    err.raw = raw;
    err.code = body && body.error ? body.error.code : String(response.status);
    err.details = body && body.error ? body.error.details : undefined;
    throw err;
  }
  return body;
}

// An element with text set as text, never parsed as HTML.
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// Times (static/talorys/js/time.js): the owner's zone from the page, one format everywhere.
// when() is the relative form lists and the chat use ("5 min ago", "yesterday 22:14").
export { zone, formatRelative as when } from "./js/time.js";

export async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    if (button) { const was = button.textContent; button.textContent = "Copied"; setTimeout(() => (button.textContent = was), 1200); }
  } catch (e) {
    if (button) button.textContent = "Copy failed";
  }
}

// A Copy button on every code block inside ``root`` that has none yet.
export function addCopyButtons(root) {
  root.querySelectorAll(".md pre").forEach((pre) => {
    if (pre.querySelector(".copy")) return;
    const b = el("button", "secondary copy", "Copy");
    b.type = "button";
    b.setAttribute("aria-label", "Copy the code");
    b.addEventListener("click", () => copyText(pre.querySelector("code") ? pre.querySelector("code").textContent : pre.textContent, b));
    pre.appendChild(b);
  });
}

// --- Undo where the action happens ----------------------------------------------------------

export const UNDO_MS = 10000; // how long "Conversation moved to the bin. [Undo]" stays

// A toast "<text>." and an Undo button (no dash: the toast sets them apart) for an item a script moved to the bin: Undo restores it through
// /api/bin/<kind>/<id>/restore (the bin's own restore), then calls ``onRestored``.
export function undoToast(text, { kind, id, onRestored = () => {} }) {
  const box = document.getElementById("toasts");
  if (!box) return null;
  const toast = el("div", "toast undo-toast");
  toast.setAttribute("role", "status");
  const said = el("span", "", /[.!?]$/.test(text) ? text : `${text}.`);
  const undo = el("button", "secondary small", "Undo");
  undo.type = "button";
  undo.addEventListener("click", async () => {
    undo.disabled = true;
    try {
      await api(`/api/bin/${encodeURIComponent(kind)}/${Number(id)}/restore`, { method: "POST" });
      toast.remove();
      onRestored();
    } catch (err) {
      said.textContent = err.message;
      undo.disabled = false;
    }
  });
  toast.append(said, undo);
  box.append(toast);
  leaveAfter(toast, UNDO_MS);
  return toast;
}

// Removes ``node`` after ``ms``, but not while the pointer or the focus is in it (then later).
function leaveAfter(node, ms) {
  const go = () => {
    if (node.matches(":hover, :focus-within")) setTimeout(go, 1000);
    else node.remove();
  };
  setTimeout(go, ms);
}

// A page's message with an Undo form (templates/base.html, talorys/lib/undo.py) goes after the
// same few seconds as the toast.
function fadeUndoMessages() {
  document.querySelectorAll(".flash li.undoable").forEach((li) => leaveAfter(li, UNDO_MS));
}

// The header's two pop-ups, the menu drawer and the bell's panel, never show together: the
// one that opens says so with "talorys:popup" (detail: its name), and the other closes.
export function announcePopup(name) {
  document.dispatchEvent(new CustomEvent("talorys:popup", { detail: name }));
}

// The menu drawer (a phone's pages): the button toggles it; Esc closes it and gives the focus
// back to the button.
function setUpMenu(menu, nav) {
  const setOpen = (open) => {
    nav.classList.toggle("open", open);
    menu.setAttribute("aria-expanded", String(open));
    if (open) announcePopup("menu");
  };
  const isOpen = () => menu.getAttribute("aria-expanded") === "true";
  menu.addEventListener("click", () => setOpen(!isOpen()));
  document.addEventListener("talorys:popup", (e) => {
    if (e.detail !== "menu" && isOpen()) setOpen(false);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !isOpen()) return;
    setOpen(false);
    menu.focus();
  });
}

// <details data-narrow-closed open>: open at desktop width, folded on a phone (where its summary
// shows; a page's CSS hides it wider), opened again when the window grows past a phone's.
const NARROW = window.matchMedia("(max-width: 760px)");
function foldOnPhones() {
  const folds = document.querySelectorAll("details[data-narrow-closed]");
  const fit = () => folds.forEach((d) => { d.open = !NARROW.matches; });
  fit();
  if (folds.length) NARROW.addEventListener("change", fit);
}

// A module runs once the document is parsed, so the header is there.
function setUpHeader() {
  const menu = document.getElementById("menu-button");
  const nav = document.getElementById("main-nav");
  if (menu && nav) setUpMenu(menu, nav);
  const theme = document.getElementById("theme-toggle");
  if (theme) {
    theme.addEventListener("click", () => {
      const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
      document.documentElement.dataset.theme = next;
      try { localStorage.setItem("talorys-theme", next); } catch (e) { /* storage off */ }
    });
  }
  // Buttons that ask first: <button data-confirm="Purge it for good?">.
  document.addEventListener("submit", (e) => {
    const button = e.submitter;
    const ask = (button && button.dataset.confirm) || e.target.dataset.confirm;
    if (ask && !window.confirm(ask)) e.preventDefault();
  });
  foldOnPhones();
  fadeUndoMessages();
  addCopyButtons(document);
  refreshTimes();
  setInterval(() => refreshTimes(), 60000); // "5 min ago" on a page left open
}

setUpHeader();
