// Notifications on every owner page: a toast for each new one (live over /ws/notifications/),
// the unread count in the header, the latest ones with "Mark read", and Web Push on this device
// through the service worker at /sw.js. Text is inserted with textContent, never as HTML, but
// for the body's `body_html`: the server's sanitised rendering of its Markdown
// (talorys/lib/markdown.py), as the chat shows a reply.
import { announcePopup, api, el } from "../common.js";
import { timeElement } from "./time.js";
import { reconnectingSocket } from "./socket.js";

const $ = (id) => document.getElementById(id);
const button = $("notif-button"); // on signed-in pages only
const badge = $("notif-count");
const panel = $("notif-panel");
const list = $("notif-list");
const empty = $("notif-empty");
const toasts = $("toasts");
const LATEST = 10;
const TOAST_MS = 8000;
const POLL_MS = window.TALORYS_POLL_MS || 30000; // tests shorten it

// --- the unread count --------------------------------------------------------------------------

// The server's count is the truth; asking again after each change (rather than counting here)
// cannot drift when a notification arrives while a request is in flight. Only the answer to
// the latest question is shown.
let asked = 0;
async function refreshUnread() {
  const mine = ++asked;
  try {
    const page = await api("/api/notifications?unread=true&limit=1");
    if (mine !== asked) return;
    badge.textContent = String(page.count);
    badge.hidden = page.count === 0;
  } catch (err) {
    console.warn("notifications: could not count unread", err);
  }
}

// --- the latest notifications ------------------------------------------------------------------

// Where a notification leads, from what made it: a reply to its conversation, an approval to
// the Approvals page. Only these two forms: the source is the server's, the URL is built here.
function linkOf(n) {
  const [kind, id] = (n.source || "").split(":");
  if (kind === "conversation" && /^\d+$/.test(id)) return `/c/${id}/`;
  if (kind === "approval" && /^\d+$/.test(id)) return `/approvals/#approval-${id}`;
  return null;
}

// The title, as a link where the notification leads somewhere.
function heading(n) {
  const href = linkOf(n);
  const title = el("strong", "", href ? "" : n.title);
  if (href) {
    const link = el("a", "", n.title);
    link.href = href;
    title.append(link);
  }
  return title;
}

// The body as the server rendered it (HTML from its Markdown, already sanitised).
function bodyOf(n) {
  const body = el("div", "body md");
  body.innerHTML = n.body_html;
  return body;
}

function item(n) {
  const li = el("li", n.read_at ? "read" : "unread");
  li.dataset.id = n.id;
  li.append(heading(n));
  if (n.body) li.append(bodyOf(n));
  const meta = el("div", "meta");
  meta.append(timeElement(n.created_at, { className: "muted" }));
  if (!n.read_at) {
    const mark = el("button", "secondary", "Mark read");
    mark.type = "button";
    mark.addEventListener("click", async () => {
      mark.disabled = true;
      try {
        await api(`/api/notifications/${n.id}/read`, { method: "POST" });
        li.className = "read";
        mark.remove();
        refreshUnread();
      } catch (err) {
        mark.disabled = false;
        mark.textContent = `Mark read (${err.message})`;
      }
    });
    meta.append(mark);
  }
  li.append(meta);
  return li;
}

async function loadList() {
  try {
    const page = await api(`/api/notifications?limit=${LATEST}`);
    list.replaceChildren(...page.items.map(item));
    empty.textContent = "No notifications yet.";
    empty.hidden = page.items.length > 0;
  } catch (err) {
    empty.textContent = err.message;
    empty.hidden = false;
  }
}

function setOpen(open) {
  panel.hidden = !open;
  button.setAttribute("aria-expanded", String(open));
  if (open) {
    announcePopup("notifications"); // the menu drawer closes: never one over the other
    loadList();
  }
}

function setUpPanel() {
  button.addEventListener("click", () => setOpen(panel.hidden));
  document.addEventListener("talorys:popup", (e) => {
    if (e.detail !== "notifications" && !panel.hidden) setOpen(false);
  });
  document.addEventListener("click", (e) => {
    if (!panel.hidden && !$("notifications").contains(e.target)) setOpen(false);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !panel.hidden) {
      setOpen(false);
      button.focus();
    }
  });
}

// --- live: toasts ------------------------------------------------------------------------------

// An approval whose card (with its buttons) is on this page, in the open conversation: the
// toast points there, not to the Approvals page (which it links to everywhere else).
function cardHere(n) {
  // Still waiting (unread): once decided, the rewritten notification says what happened.
  const match = n.kind === "approval" && !n.read_at && /^approval:(\d+)$/.exec(n.source || "");
  return Boolean(match) && document.querySelector(`.approval[data-action-id="${Number(match[1])}"]`) !== null;
}

const HERE_TEXT = "Approve or reject it below, in the conversation.";

function fillToast(box, n) {
  const here = cardHere(n);
  box.replaceChildren(here ? el("strong", "", n.title) : heading(n));
  if (n.body) box.append(here ? el("p", "", HERE_TEXT) : bodyOf(n));
  box.append(timeElement(n.created_at, { className: "muted small" }));
  const close = el("button", "close", "×");
  close.type = "button";
  close.setAttribute("aria-label", "Dismiss");
  close.addEventListener("click", () => box.remove());
  box.append(close);
}

function toast(n) {
  const box = el("div", "toast");
  box.dataset.id = n.id;
  fillToast(box, n);
  toasts.append(box);
  // The card may arrive over the chat's own socket a moment after the notification.
  if (n.kind === "approval" && !cardHere(n)) setTimeout(() => { if (box.isConnected && cardHere(n)) fillToast(box, n); }, 1500);
  setTimeout(() => box.remove(), TOAST_MS);
}

// What this page has shown: unread ids above `floor` (the newest at the page's first look; older ones
// are not news). A notification can arrive twice (socket and the POLL_MS poll, kept as a
// fallback) and out of id order (in the embedded install the server's watcher sends a
// worker's notification a second after it was made, perhaps after a newer one made by the web
// process): each is shown once. Returns whether it was new.
let floor = null;
const seen = new Set();
function show(n) {
  if ((floor !== null && n.id <= floor) || seen.has(n.id)) return false;
  seen.add(n.id);
  // Made read: only recorded, as the owner saw it happen (a proposal in the chat they were
  // following, talorys/notifications/services.py): not news, whichever way it arrives.
  if (n.read_at) return false;
  toast(n);
  return true;
}

async function catchUp() {
  try {
    const page = await api(`/api/notifications?limit=${LATEST}`);
    if (floor === null) {
      floor = page.items.length ? page.items[0].id : 0; // the page's first look: nothing is new
      $("notifications").dataset.caughtUp = "true"; // from here on a new one is shown
    } else {
      page.items.filter((n) => n.id > floor).reverse().forEach(show);
    }
    refreshUnread();
    if (!panel.hidden) loadList();
  } catch (err) {
    console.warn("notifications: could not catch up", err);
  }
}

// A notification rewritten on the server (an approval it asked about was decided, undone or
// expired): its entry in the list and its toast, where shown, say the new text, and the count
// follows (a rewritten approval is read). It is not news: it is never toasted afresh, nor later
// by the poll.
function update(n) {
  seen.add(n.id);
  const shown = list.querySelector(`li[data-id="${Number(n.id)}"]`);
  if (shown) shown.replaceWith(item(n));
  const box = toasts.querySelector(`.toast[data-id="${Number(n.id)}"]`);
  if (box) fillToast(box, n);
  refreshUnread();
}

function onMessage(message) {
  // Something another page changed: whichever part of this page shows it listens for
  // "talorys:sync" (the chat, its approval cards) and looks again.
  if (message.type === "sync") {
    window.dispatchEvent(new CustomEvent("talorys:sync", { detail: message }));
    return;
  }
  if (message.type === "notification" && message.updated) {
    update(message.notification);
    return;
  }
  if (message.type !== "notification" || !show(message.notification)) return;
  refreshUnread();
  if (!panel.hidden) {
    list.prepend(item(message.notification));
    empty.hidden = true;
  }
}

function connect() {
  reconnectingSocket("/ws/notifications/", {
    onOpen() {
      $("notifications").dataset.live = "true";
      // Whatever arrived while the socket was down is shown, counted and listed.
      catchUp();
    },
    onMessage,
    onClose() {
      delete $("notifications").dataset.live;
      refreshUnread(); // still counted while the socket is down, at each attempt
    },
  });
}

// --- Web Push on this device -------------------------------------------------------------------

const pushControl = $("push-control");
const pushToggle = $("push-toggle");
const pushStatus = $("push-status");
let pushOn = false;
// The push control as the settings page works it ({state, toggle}), where this device has one.
export let push = null;

function b64urlBytes(value) {
  const b64 = value.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (value.length % 4)) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

function sameBytes(buffer, bytes) {
  const a = buffer ? new Uint8Array(buffer) : new Uint8Array();
  return a.length === bytes.length && a.every((v, i) => v === bytes[i]);
}

function showPush(on, message) {
  pushOn = on;
  pushToggle.textContent = on ? "Turn off notifications on this device" : "Turn on notifications on this device";
  pushStatus.textContent = message || "";
}

async function savedSubscription(endpoint) {
  const page = await api("/api/push/subscriptions?limit=100");
  return page.items.find((s) => s.active && s.endpoint === endpoint);
}

async function turnOn(registration) {
  if ((await Notification.requestPermission()) !== "granted") {
    showPush(false, "Notifications are blocked for this site: allow them in the browser's site settings.");
    return;
  }
  const key = b64urlBytes((await api("/api/push/key")).public_key);
  let subscription = await registration.pushManager.getSubscription();
  // A subscription made for another server key (the key was replaced) cannot be reused.
  if (subscription && !sameBytes(subscription.options.applicationServerKey, key)) {
    await subscription.unsubscribe();
    subscription = null;
  }
  subscription =
    subscription || (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }));
  await api("/api/push/subscriptions", { method: "POST", body: subscription.toJSON() });
  showPush(true, "This device will show notifications.");
}

async function turnOff(registration) {
  const subscription = await registration.pushManager.getSubscription();
  if (subscription) {
    const saved = await savedSubscription(subscription.endpoint);
    if (saved) await api(`/api/push/subscriptions/${saved.id}`, { method: "DELETE" });
    await subscription.unsubscribe();
  }
  showPush(false, "This device will not show notifications.");
}

// Asked when the list is first opened, not on every page load.
let pushChecked = false;
async function showPushState() {
  if (pushChecked) return;
  pushChecked = true;
  try {
    const registration = await navigator.serviceWorker.ready;
    const subscription = await registration.pushManager.getSubscription();
    showPush(Boolean(subscription && (await savedSubscription(subscription.endpoint))));
    pushControl.hidden = false;
  } catch (err) {
    pushChecked = false;
    console.warn("notifications: Web Push is unavailable", err);
  }
}

function setUpPush() {
  // Registered on every page so that the browser keeps the worker current; it acts only on pushes.
  navigator.serviceWorker
    .register("/sw.js", { scope: "/" })
    .catch((err) => console.warn("notifications: the service worker did not register", err));
  button.addEventListener("click", showPushState);
  pushToggle.addEventListener("click", async () => {
    pushToggle.disabled = true;
    try {
      const registration = await navigator.serviceWorker.ready;
      await (pushOn ? turnOff(registration) : turnOn(registration));
    } catch (err) {
      pushStatus.textContent = `That did not work: ${err.message}`;
    } finally {
      pushToggle.disabled = false;
    }
  });
  // The settings page's own button (#settings-push-toggle, static/talorys/js/settings.js)
  // works this same control: one way to subscribe, whichever button the owner presses.
  push = {
    async state() {
      const registration = await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.getSubscription();
      const on = Boolean(subscription && (await savedSubscription(subscription.endpoint)));
      showPush(on);
      return on;
    },
    async toggle() {
      const registration = await navigator.serviceWorker.ready;
      await (pushOn ? turnOff(registration) : turnOn(registration));
      return { on: pushOn, message: pushStatus.textContent };
    },
  };
}

function start() {
  setUpPanel();
  connect(); // counts the unread once connected (or failed to)
  catchUp();
  setInterval(catchUp, POLL_MS);
  // Service workers exist only on https:// and localhost; elsewhere the control stays hidden.
  if ("serviceWorker" in navigator && "PushManager" in window && "Notification" in window) setUpPush();
}

if (button) start();
