// The one way a script shows a time, the same as the pages (talorys/lib/timefmt.py):
// "1 Dec 2026, 22:14" in the owner's zone (the page's data-time-zone, not the browser's), and
// for lists "just now", "5 min ago", "in 5 min", "today 22:14", "yesterday 22:14",
// "tomorrow 09:00", else the full time. The bell, the chat, the approval cards and the pages'
// relative <time data-when> use it; a browser test keeps it equal to the pages.
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

// The owner's zone, passed in the page; the browser's only where a page has none (logged out).
export function zone() {
  return document.body.dataset.timeZone || undefined;
}

// {year, month, day, hour, minute} of a Date in the owner's zone.
function parts(date) {
  const fmt = new Intl.DateTimeFormat("en-GB", {
    timeZone: zone(), year: "numeric", month: "numeric", day: "numeric",
    hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  });
  const out = {};
  for (const p of fmt.formatToParts(date)) if (p.type !== "literal") out[p.type] = Number(p.value);
  return out;
}

const pad = (n) => String(n).padStart(2, "0");
const clock = (p) => `${pad(p.hour)}:${pad(p.minute)}`;
// Whole days between two local dates, by their UTC midnights.
const dayNumber = (p) => Date.UTC(p.year, p.month - 1, p.day) / 864e5;

// "1 Dec 2026, 22:14"
export function formatFull(iso) {
  if (!iso) return "";
  const p = parts(new Date(iso));
  return `${p.day} ${MONTHS[p.month - 1]} ${p.year}, ${clock(p)}`;
}

// "5 min ago", "yesterday 22:14", ... (see above); now is for tests and refreshes.
export function formatRelative(iso, now = new Date()) {
  if (!iso) return "";
  const date = new Date(iso);
  const seconds = (date - now) / 1000;
  if (Math.abs(seconds) < 60) return "just now";
  if (Math.abs(seconds) < 3600) {
    const minutes = Math.floor(Math.abs(seconds) / 60);
    return seconds > 0 ? `in ${minutes} min` : `${minutes} min ago`;
  }
  const p = parts(date);
  const words = { 0: "today", "-1": "yesterday", 1: "tomorrow" };
  const days = dayNumber(p) - dayNumber(parts(now));
  if (days in words) return `${words[days]} ${clock(p)}`;
  return formatFull(iso);
}

// <time datetime title> with the relative text (or the full one), kept fresh by refreshTimes.
export function timeElement(iso, { relative = true, className = "" } = {}) {
  const node = document.createElement("time");
  if (className) node.className = className;
  node.dateTime = iso || "";
  node.title = formatFull(iso);
  if (relative) node.dataset.when = "relative";
  node.textContent = relative ? formatRelative(iso) : formatFull(iso);
  return node;
}

// Every relative <time data-when> under root, again (a page left open: "5 min ago" grows).
export function refreshTimes(root = document) {
  root.querySelectorAll("time[data-when]").forEach((t) => {
    const iso = t.getAttribute("datetime");
    t.textContent = formatRelative(iso);
    t.title = formatFull(iso);
  });
}
