// The chat page: one WebSocket to /ws/chat/ for the turns (reconnected by socket.js), the JSON
// API for conversations. The conversation is in the URL (/c/<id>/); the thread follows a
// streaming reply unless the owner scrolled up. A reply runs on the server whatever the page
// does: a page that shows one streaming (after a reload, in a second tab, after the socket came
// back) attaches to it and goes on from the text so far. What another page changes arrives as
// "talorys:sync" (notifications.js) and the thread and the list look again. The bubbles are chat-messages.js, the list
// chat-list.js, the title chat-head.js, the model chat-model.js. Model and owner text go in with textContent only.
import { api } from "../common.js";
import * as bubbles from "./chat-messages.js";
import { lengthGuard } from "./chat-composer.js";
import { attachments } from "./chat-attach.js";
import { head } from "./chat-head.js";
import { picker } from "./chat-model.js";
import { list } from "./chat-list.js";
import { reconnectingSocket, showSessionEnded } from "./socket.js";
import { plainMessage } from "./wording.js";

const $ = (id) => document.getElementById(id);
const root = $("chat");
const thread = $("messages");
const scroller = $("scroller");
const greeting = $("greeting");
const form = $("composer");
const input = $("text");
const sendButton = $("send");
const stopButton = $("cancel");
const status = $("status");
const jump = $("jump");
const NEAR_BOTTOM_PX = 48;
const length = lengthGuard(input, $("text-count"));
const attached = attachments({ root, list: $("attachments"), button: $("attach"), picker: $("attach-input"), input, status });
// The failed replies a Retry can mend (agent/views.py RETRYABLE_CODES); a reply stopped or cut
// off before it had a code can be asked again too.
const retryable = new Set(root.dataset.retryable.split(" "));
const canRetry = (li) => !li.dataset.errorCode || retryable.has(li.dataset.errorCode);

let conversationId = Number(root.dataset.conversationId) || null;
let live = null; // the socket (socket.js), from the page's start
let opening = 0;
let sendWhenOpen = false;
// Titles that arrived by event (generated, or renamed elsewhere): a reconcile whose answer was
// read before such a title was stored must not put the old title back.
let titlesSeen = 0;
// The turns this page follows (started here, or attached to), by conversation id ("new" until
// the server names it). Each keeps its text, its activity and the id of the last event seen
// (to attach again after that one) even while another conversation is shown.
const turns = new Map();
const keyOf = (id) => (id === null ? "new" : id);
const busy = () => turns.has(keyOf(conversationId));
const socketOpen = () => live !== null && live.isOpen();

// --- following the reply ---------------------------------------------------------------------

let stick = true;
const nearBottom = () => scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < NEAR_BOTTOM_PX;
function toBottom() {
  stick = true;
  scroller.scrollTop = scroller.scrollHeight;
  jump.hidden = true;
}
// Only the owner scrolling up lets go of the bottom: a scroll that the thread's own growth
// causes (a reply rendered at once, a card) keeps following it to the end. Away from the
// bottom, reply or not, the jump is offered.
let lastTop = 0;
scroller.addEventListener("scroll", () => {
  const up = scroller.scrollTop < lastTop - 2;
  lastTop = scroller.scrollTop;
  if (nearBottom()) stick = true;
  else if (up) stick = false;
  jump.hidden = stick;
});
// Whatever grows the thread (a delta, a card, the rendered reply) or shrinks the view (the
// phone's keyboard): follow it if the owner is at the bottom, else offer the jump.
new ResizeObserver(() => {
  if (stick) scroller.scrollTop = scroller.scrollHeight;
  else jump.hidden = nearBottom();
}).observe(thread);
new ResizeObserver(() => stick && (scroller.scrollTop = scroller.scrollHeight)).observe(scroller);
jump.addEventListener("click", () => { toBottom(); input.focus(); });
// Toasts show at the top of the thread here (chat.css), clear of the composer and the last
// message: the thread's top moves with the header and the thread's head.
const placeToasts = () => document.body.style.setProperty("--thread-top", `${Math.round(scroller.getBoundingClientRect().top)}px`);
const placer = new ResizeObserver(placeToasts);
document.querySelectorAll("header.top, .thread-head").forEach((box) => placer.observe(box));
window.addEventListener("resize", placeToasts);

// --- the page's state ------------------------------------------------------------------------

function showGreeting() {
  greeting.hidden = thread.childElementCount > 0;
}

// What Enter says while a reply streams (nothing is sent then: the text stays in the box).
const WAIT_HINT = "A reply is still coming: wait for it, or press Stop (Esc) to send yours now.";

function refreshComposer() {
  const running = busy();
  sendButton.hidden = running;
  stopButton.hidden = !running;
  sendButton.disabled = !socketOpen();
  if (!running && status.textContent === WAIT_HINT) status.textContent = "";
  refreshActions();
}

// Retry and Regenerate on the last reply, Edit on each of the owner's messages (an earlier
// one starts a branch), none while a reply streams here.
function refreshActions() {
  const items = [...thread.children];
  const last = items[items.length - 1];
  const lastUser = items.filter((li) => li.dataset.role === "user").pop();
  const idle = !busy() && socketOpen();
  // No switch while a reply streams here: the server would refuse it (the turn holds the lease).
  for (const b of thread.querySelectorAll(".branches button")) b.disabled = !idle || !b.dataset.target;
  for (const li of items) {
    const actions = [];
    const state = li.dataset.status;
    if (idle && li === last && li.dataset.role === "assistant") {
      if (li.resend && canRetry(li)) actions.push({ label: "Retry", style: "primary", run: () => resend(li) });
      else if (state === "cancelled" || (state === "error" && !li.resend && canRetry(li))) actions.push({ label: "Retry", style: "primary", run: () => send("", { retry: true }) });
      else if (state === "complete") actions.push({ label: "Regenerate", run: () => send("", { regenerate: true }) });
    }
    if (idle && li === lastUser && li.dataset.id && li === last) actions.push({ label: "Retry", style: "primary", run: () => send("", { retry: true }) });
    if (idle && li.dataset.role === "user" && li.dataset.id && !["import", "client"].includes(li.dataset.origin)) {
      actions.push({ label: "Edit", run: () => bubbles.edit(li, { save: (text) => send(text, { edit: true, li }), cancel: () => input.focus() }) });
    }
    bubbles.setActions(li, actions);
  }
}

function render(convo) {
  head.set(convo.id, convo.title);
  picker.set(convo.id, convo.model);
  const items = (convo.messages || []).map((m) => {
    const li = bubbles.fromApi(m);
    bubbles.setBranches(li, m.siblings, showBranch);
    return li;
  });
  const turn = turns.get(convo.id);
  if (turn) {
    // This page's live turn: its bubble (with what has streamed so far) replaces the stored one.
    const i = items.findIndex((li) => Number(li.dataset.id) === turn.messageId);
    if (i >= 0) items[i] = turn.li;
    else items.push(turn.li);
  }
  thread.replaceChildren(...items);
  showGreeting();
  const last = items[items.length - 1];
  if (last && last.dataset.role === "assistant" && last.dataset.status === "streaming" && !turns.has(convo.id)) attach(convo.id, last);
  refreshComposer();
}

// Follow the reply streaming in `li` (shown from the stored conversation): the server answers
// with what it has said so far (a snapshot), then the rest as it comes.
function attach(id, li) {
  const turn = { conversationId: id, li, userLi: li.previousElementSibling, text: "", started: true, error: null, messageId: Number(li.dataset.id) || null, sent: null, lastId: null };
  turns.set(id, turn);
  sendAttach(turn);
}

function sendAttach(turn) {
  if (!socketOpen()) return; // onOpen attaches every turn again
  const frame = { type: "attach", conversation_id: turn.conversationId };
  if (turn.lastId) frame.last_event_id = turn.lastId;
  live.socket.send(JSON.stringify(frame));
}

async function open(id, { push = true } = {}) {
  const mine = ++opening;
  conversationId = id;
  list.setActive(id);
  if (push && location.pathname !== `/c/${id}/`) history.pushState({ id }, "", `/c/${id}/`);
  head.set(id, "");
  picker.hide();
  thread.replaceChildren();
  greeting.hidden = true;
  refreshComposer();
  try {
    const convo = await api(`/api/conversations/${id}`);
    if (mine !== opening) return;
    render(convo);
    toBottom();
    status.textContent = "";
  } catch (err) {
    if (mine !== opening) return;
    if (err.code === "NOT_FOUND") {
      newChat({ push: false });
      history.replaceState({}, "", "/");
    }
    status.textContent = err.code === "NOT_FOUND" ? "That conversation is not there any more (it may be in the bin)." : err.message;
  }
}

// The open conversation went to the bin (here, or in another window: the sync may come first):
// its URL is left for the new chat's, in place, so Back does not return to it.
function leaveDeleted() {
  newChat({ push: false });
  history.replaceState({}, "", "/");
}

function newChat({ push = true } = {}) {
  ++opening;
  conversationId = null;
  if (push && location.pathname !== "/") history.pushState({}, "", "/");
  list.setActive(null);
  head.set(null, "");
  picker.set(null);
  const turn = turns.get("new");
  thread.replaceChildren(...(turn ? [turn.userLi, turn.li] : []));
  showGreeting();
  refreshComposer();
  input.focus();
}

// Show the branch through message `id` (another version of a message), as the server keeps
// it from then on; the focus stays on the arrow used, in the thread as it now is.
async function showBranch(id, which) {
  if (busy() || conversationId === null) return;
  const at = conversationId;
  try {
    const convo = await api(`/api/conversations/${at}/branch`, { method: "POST", body: { message_id: id } });
    if (at !== conversationId) return;
    render(convo);
    status.textContent = "";
    const arrows = thread.querySelectorAll(`li[data-id="${id}"] > .branches button`);
    const same = [...arrows].find((b) => b.dataset.branch === which && !b.disabled);
    (same || [...arrows].find((b) => !b.disabled) || input).focus();
  } catch (err) {
    status.textContent = err.message;
  }
}

// After a turn: the stored conversation has what the events do not carry (the turn's changes,
// a regenerated or retried reply replacing the old one), so the thread is brought in line.
async function reconcile(id, messageId) {
  let convo;
  const titlesBefore = titlesSeen;
  try {
    convo = await api(`/api/conversations/${id}`);
  } catch (err) {
    return;
  }
  if (id !== conversationId || busy()) return;
  if (titlesSeen !== titlesBefore) convo = { ...convo, title: head.title() }; // newer than the answer
  // The versions too: an edit or a regenerate gives its message a "‹ 2/2" to show.
  const shown = [...thread.children].map((li) => `${li.dataset.id}:${li.dataset.role === "user" ? "" : li.dataset.status}:${li.dataset.siblings || 1}`);
  const stored = convo.messages.map((m) => `${m.id}:${m.role === "user" ? "" : m.status}:${Math.max(1, (m.siblings || []).length)}`);
  if (shown.join() !== stored.join()) {
    render(convo);
    return;
  }
  const m = convo.messages.find((x) => x.id === messageId);
  const li = thread.querySelector(`li[data-id="${messageId}"]`);
  if (m && li) bubbles.setChanges(li, m.changes);
  if (convo.title !== head.title()) head.set(id, convo.title);
}

// --- turns -----------------------------------------------------------------------------------

function send(text, mode = {}) {
  if (!socketOpen() || busy()) return false;
  const problem = length.problem(text) || (mode.files ? attached.problem() : "");
  if (problem) {
    status.textContent = problem; // refused here: the API would refuse it
    input.focus();
    return false;
  }
  const items = [...thread.children];
  const last = items[items.length - 1];
  let userLi = items.filter((li) => li.dataset.role === "user").pop();
  if (mode.edit && mode.li) userLi = mode.li; // any of the owner's messages
  // The reply or message replaced, so a page out of date is refused rather than misread.
  const target = mode.regenerate ? last : mode.edit ? userLi : null;
  if (mode.retry || mode.regenerate) {
    if (last && last.dataset.role === "assistant") last.remove(); // the server drops it too
  } else if (mode.edit) {
    // What followed it leaves with it (kept on the server, as the old branch).
    bubbles.setText(userLi, text);
    bubbles.setBranches(userLi, []); // the new version's arrows come with the stored conversation
    while (userLi.nextElementSibling) userLi.nextElementSibling.remove();
  } else {
    userLi = bubbles.item("user");
    bubbles.setText(userLi, text);
    bubbles.setAttachments(userLi, mode.files);
    thread.appendChild(userLi);
  }
  const li = bubbles.item("assistant");
  bubbles.setStatus(li, "streaming");
  thread.appendChild(li);
  const turn = { conversationId, li, userLi, text: "", started: false, error: null, messageId: null, sent: { text, mode } };
  turns.set(keyOf(conversationId), turn);
  // Only the flags that are set: the frame's schema forbids fields it does not know.
  const frame = { type: "send", text, conversation_id: conversationId };
  for (const flag of ["retry", "regenerate", "edit"]) if (mode[flag]) frame[flag] = true;
  if (target && target.dataset.id) frame.message_id = Number(target.dataset.id);
  if (mode.files && mode.files.length) frame.attachments = mode.files.map((f) => f.id);
  if (conversationId === null && picker.chosen()) frame.model = turn.model = picker.chosen(); // a new chat's
  live.socket.send(JSON.stringify(frame));
  status.textContent = "";
  showGreeting();
  refreshComposer();
  toBottom();
  input.focus();
  return true;
}

// A turn that never began (refused before anything was kept): ask the same again.
function resend(li) {
  const { text, mode } = li.resend;
  const userLi = li.previousElementSibling;
  li.remove();
  if (userLi && !userLi.dataset.id) userLi.remove();
  send(text, mode);
}

function stop() {
  const turn = turns.get(keyOf(conversationId));
  if (!turn) return;
  // Sent when the server names the conversation, or when the socket (re)opens.
  if (turn.conversationId === null || !socketOpen()) turn.stopWanted = true;
  else live.socket.send(JSON.stringify({ type: "cancel", conversation_id: turn.conversationId }));
  input.focus();
}

// The server names a new conversation in the turn's first event.
function adopt(turn, id) {
  turns.delete("new");
  turn.conversationId = id;
  turns.set(id, turn);
  if (conversationId === null && turn.li.isConnected) {
    conversationId = id;
    history.pushState({ id }, "", `/c/${id}/`);
    list.setActive(id);
    head.set(id, "");
    picker.set(id, turn.model);
  }
  if (turn.stopWanted) live.socket.send(JSON.stringify({ type: "cancel", conversation_id: id }));
  list.refresh();
}

function turnFor(event) {
  const id = event.conversation_id;
  if (id != null && turns.has(id)) return turns.get(id);
  if (id == null && event.type === "error") {
    // A refused frame names no conversation: it was the latest turn not yet begun.
    const waiting = [...turns.values()].filter((t) => !t.started).pop();
    if (waiting) return waiting;
  }
  const fresh = turns.get("new");
  if (fresh && !fresh.started) {
    if (id != null) adopt(fresh, id);
    return fresh;
  }
  return null;
}

// What an attach answers: the reply so far (or, finished, as saved).
function catchUp(turn, event) {
  if (event.message_id == null || (turn.messageId && event.message_id !== turn.messageId)) {
    // Not the reply this page shows (another turn has begun since): look again.
    turns.delete(keyOf(turn.conversationId));
    refreshComposer();
    if (turn.conversationId === conversationId) reconcile(conversationId, null);
    return;
  }
  turn.messageId = event.message_id;
  turn.li.dataset.id = event.message_id;
  turn.text = event.text;
  bubbles.setText(turn.li, turn.text);
  bubbles.setActivities(turn.li, event.activity);
  if (event.status !== "streaming") {
    if (event.status === "error") turn.error = { code: "", message: event.error_message };
    finish(turn, event);
  }
}

function finish(turn, event) {
  turns.delete(keyOf(turn.conversationId));
  const li = turn.li;
  if (event.html) bubbles.setHtml(li, turn.text, event.html);
  else bubbles.setText(li, turn.text);
  bubbles.setStatus(li, event.status, turn.error);
  if (!turn.started && event.status === "error") {
    // Refused before anything was kept. A retry, regenerate or edit: the stored conversation
    // is still as it was, so the page shows it again, with the reason. A new message: it
    // stays on the page with Retry, so its text is not lost.
    const { mode } = turn.sent;
    if ((mode.retry || mode.regenerate || mode.edit) && turn.conversationId !== null) {
      li.remove();
      refreshComposer();
      if (turn.conversationId === conversationId) open(conversationId, { push: false }).then(() => (status.textContent = plainMessage(turn.error.message, bubbles.LABELS)));
      return;
    }
    li.resend = turn.sent;
  }
  if (li.isConnected && document.activeElement === document.body) input.focus();
  refreshComposer();
  list.refresh();
  if (turn.started && turn.conversationId !== null && li.isConnected) reconcile(turn.conversationId, turn.messageId);
}

function onEvent(event) {
  const turn = turnFor(event);
  if (turn && event.id) turn.lastId = event.id;
  switch (event.type) {
    case "title":
      titlesSeen += 1;
      if (event.conversation_id === conversationId) head.set(conversationId, event.title);
      list.refresh();
      break;
    case "start":
      if (!turn) break;
      turn.started = true;
      turn.messageId = event.message_id;
      turn.li.dataset.id = event.message_id;
      if (event.user_message_id && turn.userLi) turn.userLi.dataset.id = event.user_message_id;
      for (const id of event.replaced_message_ids || []) {
        const gone = thread.querySelector(`li[data-id="${id}"]`);
        if (gone && gone !== turn.userLi) gone.remove();
      }
      break;
    case "text":
      if (!turn) break;
      turn.text += event.delta;
      bubbles.setText(turn.li, turn.text);
      break;
    case "tool":
      if (turn) bubbles.addActivity(turn.li, event.activity);
      break;
    case "error":
      if (turn) {
        turn.error = { code: event.code, message: event.message };
        if (!turn.started) finish(turn, { status: "error" }); // refused: no done follows
      } else {
        status.textContent = plainMessage(event.message, bubbles.LABELS);
      }
      break;
    case "snapshot":
      if (turn) catchUp(turn, event);
      break;
    case "done":
      if (turn) finish(turn, event);
      break;
  }
}

function onOpen() {
  // The replies followed before the socket dropped ran on: go on from the last event seen.
  for (const turn of turns.values()) {
    if (!turn.started || turn.conversationId === null) continue;
    sendAttach(turn);
    if (turn.stopWanted) live.socket.send(JSON.stringify({ type: "cancel", conversation_id: turn.conversationId }));
  }
  if (sendWhenOpen) { sendWhenOpen = false; form.requestSubmit(); }
  if (status.dataset.connecting) { status.textContent = ""; delete status.dataset.connecting; }
  refreshComposer();
}

function onClose() {
  // A reply that began runs on without the socket (onOpen attaches again). One not begun yet
  // may never have reached the server: it is shown stopped, with Retry.
  for (const turn of [...turns.values()]) if (!turn.started) finish(turn, { status: "cancelled" });
  status.textContent = "Connecting…";
  status.dataset.connecting = "1";
  refreshComposer();
}

function onSessionEnded() {
  delete status.dataset.connecting;
  status.textContent = "Your session has ended: log in again to go on.";
  showSessionEnded();
}

// --- the owner's controls --------------------------------------------------------------------

form.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  if (busy()) {
    status.textContent = WAIT_HINT;
    return;
  }
  if (send(text, { files: attached.files() })) {
    input.value = "";
    attached.clear();
    length.show();
  } else if (!socketOpen() && !length.problem(text)) sendWhenOpen = true; // a click before the socket opened is kept
});
input.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    form.requestSubmit();
  }
});
stopButton.addEventListener("click", stop);
document.addEventListener("keydown", (e) => {
  if (e.key !== "Escape" || e.defaultPrevented) return;
  if (list.closeDrawer()) return;
  if (!$("notif-panel") || $("notif-panel").hidden) {
    if (busy()) { e.preventDefault(); stop(); }
  }
});
$("new-chat").addEventListener("click", () => { list.closeDrawer(); newChat(); });
$("suggestions").addEventListener("click", (e) => {
  const button = e.target.closest("button[data-prompt]");
  if (!button) return;
  input.value = button.dataset.prompt;
  form.requestSubmit();
});

// Another page changed a conversation (notifications.js passes the server's sync frames on).
window.addEventListener("talorys:sync", ({ detail }) => {
  if (detail.what === "change") {
    // A change reverted elsewhere: the reply that made it shows it reverted.
    const shown = conversationId !== null && thread.querySelector(`li[data-id="${detail.message_id}"]`);
    if (shown && !busy()) reconcile(conversationId, detail.message_id);
    return;
  }
  if (detail.what !== "conversation") return;
  list.refresh();
  if (detail.conversation_id !== conversationId) return;
  if (detail.change === "renamed") {
    titlesSeen += 1;
    head.set(conversationId, detail.title);
  } else if (detail.change === "model") picker.set(conversationId, detail.model);
  else if (detail.change === "deleted" && !busy()) {
    leaveDeleted();
    status.textContent = "That conversation was moved to the bin (in another window).";
  } else if (!busy()) reconcile(conversationId, null); // a message sent, a reply ended elsewhere
});

window.addEventListener("popstate", () => {
  const match = location.pathname.match(/^\/c\/(\d+)\/$/);
  if (match) open(Number(match[1]), { push: false });
  else newChat({ push: false });
});

// The demo notice, unless the owner dismissed it in this tab's session.
const DEMO_DISMISSED = "talorys-demo-banner-dismissed";
function demoDismissed() {
  try { return sessionStorage.getItem(DEMO_DISMISSED) === "1"; } catch (e) { return false; }
}
$("demo-dismiss").addEventListener("click", () => {
  $("demo-banner").hidden = true;
  try { sessionStorage.setItem(DEMO_DISMISSED, "1"); } catch (e) { /* storage off: this page only */ }
  input.focus();
});
api("/api/settings")
  .then((s) => ($("demo-banner").hidden = s.provider !== "demo" || demoDismissed()))
  .catch(() => {});
list.init({ onOpen: (id) => open(id), active: conversationId });
picker.init({ onChanged: () => list.refresh() });
head.init({
  onRenamed: () => list.refresh(),
  onDeleted: (id) => {
    if (id === conversationId) leaveDeleted();
    list.refresh();
  },
  onRestored: (id) => {
    list.refresh();
    if (conversationId === null && !busy()) open(id);
  },
});
live = reconnectingSocket("/ws/chat/", { onOpen, onMessage: onEvent, onClose, onSessionEnded, maxDelayMs: 15000 });
refreshComposer();
if (conversationId) open(conversationId, { push: false });
else newChat({ push: false });
input.focus();
