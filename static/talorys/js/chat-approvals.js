// The chat's approval cards: one per destructive action the model proposed, in plain words,
// with the target, the diff of a rewrite and the time left. A card asks the server for the
// action's state before offering buttons: a card in an older message may have been decided (or
// have expired) since, and looks again whenever any page changes it (a "talorys:sync" about
// the approval: decided in another tab, on the Approvals page, expired). All text goes in
// with textContent.
import { api, el } from "../common.js";
import { formatFull } from "./time.js";

const TICK_MS = 30000;

const WORDS = {
  pending: "Waiting for you",
  committed: "Done",
  undone: "Undone",
  rejected: "Rejected",
  expired: "Expired",
  failed: "Failed",
  withdrawn: "Withdrawn: a newer proposal replaced it",
};
const TAGS = { pending: "warn", committed: "ok", undone: "", rejected: "", expired: "", failed: "err", withdrawn: "" };

// "29 min", "1 h 5 min", "less than a minute".
function left(iso) {
  const ms = new Date(iso) - new Date();
  if (!(ms > 0)) return "";
  const minutes = Math.floor(ms / 60000);
  if (minutes < 1) return "less than a minute";
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}

function future(iso) {
  return Boolean(iso) && new Date(iso) > new Date();
}

// The word diff (talorys/lib/diff.py runs) as <del>/<ins>, like templates/_diff.html.
function diffBlock(runs) {
  const block = el("div", "diff");
  block.setAttribute("aria-label", "What changes");
  for (const run of runs) {
    const tag = run.op === "del" ? "del" : run.op === "ins" ? "ins" : "span";
    block.appendChild(el(tag, "", run.text));
  }
  return block;
}

export function approvalCard(activity) {
  const card = el("div", "approval");
  card.dataset.actionId = activity.action_id;
  const head = el("div", "approval-head");
  const state = el("span", "tag warn approval-state", "Checking…");
  const title = el("strong", "approval-summary", activity.sentence || activity.summary || activity.tool);
  head.append(state, " ", title);
  const detail = el("div", "approval-detail");
  const clock = el("p", "approval-time muted");
  const problem = el("p", "error approval-error");
  problem.hidden = true;
  const buttons = el("div", "row approval-buttons");
  card.append(head, detail, clock, problem, buttons);
  let action = null;

  const button = (label, verb, style) => {
    const b = el("button", `small ${style || ""}`.trim(), label);
    b.type = "button";
    b.addEventListener("click", () => decide(verb));
    return b;
  };

  // The clock and the buttons that depend on it: what is left before it expires, or of
  // the undo window.
  const tick = () => {
    if (!action) return;
    if (action.status === "pending") {
      const rest = left(action.expires_at);
      clock.textContent = rest ? `Expires in ${rest} if you do nothing.` : "Expiring now.";
      clock.title = `Until ${formatFull(action.expires_at)}`;
      clock.hidden = false;
    } else if (action.status === "committed" && future(action.undo_until)) {
      clock.textContent = `You can undo this for ${left(action.undo_until)}.`;
      clock.title = `Until ${formatFull(action.undo_until)}`;
      clock.hidden = false;
    } else {
      clock.hidden = true;
    }
    const undoable = action.status === "committed" && future(action.undo_until);
    if (action.status === "pending" && !buttons.childElementCount) {
      buttons.replaceChildren(button("Approve", "approve"), button("Reject", "reject", "secondary"));
    } else if (action.status !== "pending") {
      buttons.replaceChildren(...(undoable ? [button("Undo", "undo", "secondary")] : []));
    }
  };

  const show = (next) => {
    const before = action && action.status;
    action = next;
    const word = WORDS[next.status] || next.status;
    state.textContent = next.status === "failed" && next.error ? `${word}: ${next.error}` : word;
    state.className = `tag ${TAGS[next.status] || ""} approval-state`.trim();
    card.dataset.status = next.status;
    if (next.summary) title.textContent = next.summary;
    detail.replaceChildren();
    if (Array.isArray(next.diff) && next.diff.length) {
      detail.appendChild(diffBlock(next.diff));
    } else if (next.preview) {
      detail.appendChild(el("p", "approval-preview", next.preview));
    }
    if (before !== next.status) buttons.replaceChildren();
    problem.hidden = true;
    tick();
  };

  let looks = 0; // refresh (below) shows only the answer to its latest look
  const decide = async (verb) => {
    buttons.querySelectorAll("button").forEach((b) => (b.disabled = true));
    try {
      const decided = await api(`/api/approvals/${activity.action_id}/${verb}`, { method: "POST" });
      looks++; // a look begun before the decision would show the card undecided again
      show(decided);
    } catch (err) {
      problem.textContent = err.message;
      problem.hidden = false;
      api(`/api/approvals/${activity.action_id}`)
        .then((fresh) => { buttons.replaceChildren(); show(fresh); problem.textContent = err.message; problem.hidden = false; })
        .catch(() => buttons.querySelectorAll("button").forEach((b) => (b.disabled = false)));
    }
  };

  // The action's state as the server has it now: when the card is made, and again on a sync.
  // Only the answer to the latest look is shown.
  const refresh = () => {
    const mine = ++looks;
    return api(`/api/approvals/${activity.action_id}`)
      .then((fresh) => { if (mine === looks) show(fresh); })
      .catch((err) => {
        if (mine !== looks) return;
        if (!action) state.textContent = "Unavailable";
        problem.textContent = err.message;
        problem.hidden = false;
      });
  };

  card.tick = tick;
  card.refresh = refresh;
  refresh();
  return card;
}

// Another page (or this one, or the server's expiry) changed an approval: every card for it
// on this page looks again, so its state and buttons follow without a reload.
window.addEventListener("talorys:sync", (event) => {
  const sync = event.detail || {};
  if (sync.what !== "approval" || sync.action_id == null) return;
  document
    .querySelectorAll(`.approval[data-action-id="${Number(sync.action_id)}"]`)
    .forEach((card) => card.refresh && card.refresh());
});

// One clock for every card on the page.
setInterval(() => document.querySelectorAll(".approval").forEach((card) => card.tick && card.tick()), TICK_MS);
