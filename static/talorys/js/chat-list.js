// The chat's conversation list: grouped by the day of its last message in the owner's zone
// (Today, Yesterday, Previous 7 days, Older), searched through ?q= as the owner types, and a
// drawer on narrow screens. Titles go in with textContent.
import { api, el, zone } from "../common.js";

const $ = (id) => document.getElementById(id);
const LIMIT = 50;
const DEBOUNCE_MS = 250;
const NARROW = window.matchMedia("(max-width: 760px)");

const nav = $("conversation-list");
const empty = $("conversation-empty");
const search = $("conversation-search");
const aside = $("conversations");
const toggle = $("drawer-toggle");
const backdrop = $("drawer-backdrop");
let onOpen = () => {};
let active = null;
let asked = 0;
let timer = null;

// "2024-05-01" in the owner's zone; days between two such dates by their UTC midnights.
const day = (date) => date.toLocaleDateString("en-CA", { timeZone: zone() });
const daysBetween = (a, b) => Math.round((Date.parse(a) - Date.parse(b)) / 864e5);

function groupOf(iso, today) {
  const days = daysBetween(today, day(new Date(iso)));
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days <= 7) return "Previous 7 days";
  return "Older";
}

// Conversations not started in this chat: by another app through the OpenAI-compatible
// endpoint (/v1), or by a scheduled prompt's run (its answer, which the owner can continue).
const BADGES = {
  api: ["API", "Started from another app (the OpenAI-compatible endpoint)"],
  automation: ["Scheduled", "A scheduled prompt's answer (Automations)"],
};

function link(c) {
  const a = el("a", "conversation", c.title || `Conversation ${c.id}`);
  a.href = `/c/${c.id}/`;
  a.dataset.id = c.id;
  const badge = BADGES[c.origin];
  if (badge) {
    const tag = el("span", "origin-badge", badge[0]);
    tag.title = badge[1];
    a.prepend(tag, " ");
  }
  if (c.model) a.append(el("small", "model-badge", c.model)); // not the default model
  if (c.id === active) a.setAttribute("aria-current", "page");
  a.addEventListener("click", (e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return; // a new tab
    e.preventDefault();
    closeDrawer();
    onOpen(c.id);
  });
  return a;
}

function render(items, query) {
  const today = day(new Date());
  const groups = new Map();
  for (const c of items) {
    const name = groupOf(c.updated_at || c.created_at, today);
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(c);
  }
  const sections = [];
  for (const [name, list] of groups) {
    const section = el("section", "group");
    section.appendChild(el("h3", "", name));
    const ul = el("ul");
    for (const c of list) {
      const li = el("li");
      li.appendChild(link(c));
      ul.appendChild(li);
    }
    section.appendChild(ul);
    sections.push(section);
  }
  nav.replaceChildren(...sections);
  empty.textContent = query ? `No conversation matches “${query}”.` : "No conversations yet.";
  empty.hidden = items.length > 0;
}

// Only the answer to the latest question is shown: an earlier, slower search cannot
// overwrite a later one.
async function refresh() {
  const mine = ++asked;
  const query = search.value.trim();
  const params = new URLSearchParams({ limit: String(LIMIT) });
  if (query) params.set("q", query);
  try {
    const page = await api(`/api/conversations?${params}`);
    if (mine === asked) render(page.items || [], query);
  } catch (err) {
    if (mine !== asked) return;
    nav.replaceChildren();
    empty.textContent = err.message;
    empty.hidden = false;
  }
}

function setActive(id) {
  active = id;
  nav.querySelectorAll("a.conversation").forEach((a) => {
    if (Number(a.dataset.id) === id) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  });
}

// --- the drawer (≤ 760 px) -------------------------------------------------------------------

function isOpen() {
  return aside.classList.contains("open");
}

function openDrawer() {
  aside.classList.add("open");
  backdrop.hidden = false;
  toggle.setAttribute("aria-expanded", "true");
  search.focus();
}

function closeDrawer() {
  if (!isOpen()) return false;
  aside.classList.remove("open");
  backdrop.hidden = true;
  toggle.setAttribute("aria-expanded", "false");
  return true;
}

toggle.addEventListener("click", () => (isOpen() ? closeDrawer() : openDrawer()));
backdrop.addEventListener("click", closeDrawer);
NARROW.addEventListener("change", () => closeDrawer());
search.addEventListener("input", () => {
  clearTimeout(timer);
  timer = setTimeout(refresh, DEBOUNCE_MS);
});
search.addEventListener("keydown", (e) => {
  if (e.key === "Enter") {
    e.preventDefault();
    clearTimeout(timer);
    refresh();
  }
});

export const list = {
  init(options) {
    onOpen = options.onOpen;
    active = options.active;
    refresh();
  },
  refresh,
  setActive,
  closeDrawer,
};
