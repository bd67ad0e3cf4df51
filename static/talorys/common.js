// Helpers shared by the owner pages' scripts, and the header: the menu drawer, the theme
// toggle, copy buttons on code. An ES module (base.html loads it on every page): a page's script
// imports what it uses from here, and the header is set up once, however many import it.

import { refreshTimes } from "./js/time.js";

export function csrf() {
  const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

// JSON to and from /api/ with the session cookie and the CSRF header; an error answer
// becomes an Error carrying the envelope's message and code.
export async function api(path, options = {}) {
  const init = { credentials: "same-origin", headers: { "X-CSRFToken": csrf() }, ...options };
  if (init.body && typeof init.body !== "string") {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(init.body);
  }
  const response = await fetch(path, init);
  const body = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) {
    const err = new Error(body && body.error ? body.error.message : response.statusText);
    err.code = body && body.error ? body.error.code : String(response.status);
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

// A module runs once the document is parsed, so the header is there.
function setUpHeader() {
  const menu = document.getElementById("menu-button");
  const nav = document.getElementById("main-nav");
  if (menu && nav) {
    menu.addEventListener("click", () => {
      const open = nav.classList.toggle("open");
      menu.setAttribute("aria-expanded", String(open));
    });
  }
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
  addCopyButtons(document);
  refreshTimes();
  setInterval(() => refreshTimes(), 60000); // "5 min ago" on a page left open
}

setUpHeader();
