// The chat's message bubbles: the owner's text, a reply's tool activity, its body (plain text
// while it streams, the server's sanitised Markdown once done), its error or "Stopped" note,
// the turn's changes with Revert, and the buttons under it. The only HTML ever parsed is the
// server's sanitised rendering (talorys/lib/markdown.py); everything else is textContent.
import { addCopyButtons, api, copyText, el } from "../common.js";
import { timeElement } from "./time.js";
import { approvalCard } from "./chat-approvals.js";
import { plainMessage } from "./wording.js";


const STATUS_WORDS = { ok: "done", error: "failed", refused: "refused", awaiting_approval: "waiting for you" };
// The chat's fields as the owner knows them, for the API's messages that name them.
export const LABELS = { text: "Your message" };
const CHANGE_WORDS = { create: "Added", update: "Changed", delete: "Moved to the bin", restore: "Restored" };

export function item(role) {
  const li = el("li", `msg ${role}`);
  li.dataset.role = role;
  if (role === "assistant") li.appendChild(el("div", "tools"));
  li.appendChild(el("div", "body"));
  if (role === "assistant") li.append(el("div", "note"), el("ul", "changes"));
  li.appendChild(el("div", "msg-actions"));
  li.source = "";
  return li;
}

function part(li, name) {
  return li.querySelector(`:scope > .${name}`);
}

// Plain text: what the owner wrote, and a reply while it streams.
export function setText(li, text) {
  li.source = text || "";
  const body = part(li, "body");
  body.className = "body plain";
  body.textContent = li.source;
}

// The server's rendering of the reply's Markdown, sanitised there (nh3): links already carry
// target and rel, and nothing in it runs.
export function setHtml(li, source, html) {
  li.source = source || "";
  const body = part(li, "body");
  body.className = "body md";
  body.innerHTML = html;
  addCopyButtons(li);
}

export function setStatus(li, status, error) {
  li.dataset.status = status;
  // The failure's code: for the page's script (chat.js, whether Retry can mend it), not shown.
  if (status === "error" && error && error.code) li.dataset.errorCode = error.code;
  else delete li.dataset.errorCode;
  li.classList.toggle("streaming", status === "streaming");
  // Not "error": app.css's .error would colour the whole bubble.
  li.classList.toggle("failed", status === "error");
  li.classList.toggle("stopped", status === "cancelled");
  li.setAttribute("aria-busy", String(status === "streaming"));
  const note = part(li, "note");
  if (!note) return;
  if (status === "error") {
    note.replaceChildren(el("strong", "", "Something went wrong: "), el("span", "reason", plainMessage((error && error.message) || "the reply failed.", LABELS)));
  } else if (status === "cancelled") {
    note.replaceChildren(el("strong", "", "Stopped"), el("span", "muted", " before the reply was finished."));
  } else {
    note.replaceChildren();
  }
  note.hidden = !note.childElementCount;
}

// One tool call as a short sentence; the tool, its status and arguments on demand.
function activityLine(activity) {
  const sentence = activity.sentence || activity.summary || `${activity.tool}: ${activity.status}`;
  const details = el("details", `activity ${activity.status || ""}`.trim());
  details.appendChild(el("summary", "", sentence));
  const facts = el("p", "muted");
  facts.textContent = `Tool: ${activity.tool} · ${STATUS_WORDS[activity.status] || activity.status}`;
  details.appendChild(facts);
  if (activity.summary && activity.summary !== sentence) details.appendChild(el("p", "muted", activity.summary));
  if (activity.args !== undefined && activity.args !== null && activity.args !== "") {
    const args = typeof activity.args === "string" ? activity.args : JSON.stringify(activity.args, null, 1);
    details.appendChild(el("pre", "args", args));
  }
  return details;
}

export function addActivity(li, activity) {
  const tools = part(li, "tools");
  if (!tools || !activity) return;
  if (activity.status === "awaiting_approval" && activity.action_id) tools.appendChild(approvalCard(activity));
  else tools.appendChild(activityLine(activity));
}

// A reply's whole activity at once (an attach's snapshot): what was shown before goes.
export function setActivities(li, activities) {
  const tools = part(li, "tools");
  if (!tools) return;
  tools.replaceChildren();
  for (const activity of activities || []) addActivity(li, activity);
}

function changeLine(change) {
  const li = el("li", "change");
  const what = `${CHANGE_WORDS[change.action] || change.action} ${change.kind}`;
  li.appendChild(el("span", "", change.title ? `${what}: “${change.title}”` : what));
  const revert = el("button", "secondary small", "Revert");
  revert.type = "button";
  const state = el("span", "muted change-state");
  const reverted = () => {
    revert.remove();
    state.textContent = "Reverted";
  };
  revert.setAttribute("aria-label", `Revert: ${what}`);
  revert.addEventListener("click", async () => {
    revert.disabled = true;
    try {
      await api(`/api/changes/${change.id}/revert`, { method: "POST" });
      reverted();
    } catch (err) {
      revert.disabled = false;
      state.textContent = err.message;
    }
  });
  li.append(" ", state);
  if (change.reverted) reverted();
  else li.insertBefore(revert, state);
  return li;
}

export function setChanges(li, changes) {
  const list = part(li, "changes");
  if (!list) return;
  list.replaceChildren(...(changes || []).map(changeLine));
  list.hidden = !list.childElementCount;
}

// The files attached to an owner's message: each a link to its content (a binned one by name
// alone). `files` as the API gives them (MessageOut.attachments) or as uploaded (FileOut).
export function setAttachments(li, files) {
  part(li, "attachments")?.remove();
  if (!files || !files.length) return;
  const list = el("ul", "attachments");
  list.setAttribute("aria-label", "Attached files");
  for (const file of files) {
    const row = el("li", "attachment");
    const url = file.url === undefined ? `/files/${file.id}/content` : file.url;
    if (url) {
      const link = el("a", "", file.name);
      link.href = url;
      link.target = "_blank";
      link.rel = "noopener";
      row.appendChild(link);
    } else row.appendChild(el("span", "muted", `${file.name} (in the bin)`));
    list.appendChild(row);
  }
  part(li, "body").after(list);
}

// A reply as the API stores it (GET /api/conversations/{id}), or an owner message.
export function fromApi(m) {
  const li = item(m.role);
  li.dataset.id = m.id;
  li.dataset.origin = m.origin || "live";
  if (m.role === "assistant") (m.tool_activity || []).forEach((a) => addActivity(li, a));
  if (m.role === "assistant" && m.html) setHtml(li, m.content, m.html);
  else setText(li, m.content);
  setAttachments(li, m.attachments);
  const error = { code: m.error_code, message: m.error_message || (m.error_code ? "the reply failed." : "") };
  setStatus(li, m.status || "complete", error);
  setChanges(li, m.changes);
  if (m.created_at) {
    part(li, "msg-actions").before(timeElement(m.created_at, { className: "muted when" }));
  }
  return li;
}

// The versions of a message, when it has some (an earlier edit of it, another version of a
// reply): "‹ 2/3 ›". Each arrow asks `show(id, which)` for the branch through the version
// before or after this one (agent/branches.py); an arrow with none there is disabled.
export function setBranches(li, siblings, show) {
  const ids = siblings || [];
  li.dataset.siblings = String(Math.max(1, ids.length));
  const old = part(li, "branches");
  if (old) old.remove();
  if (ids.length < 2) return;
  const at = ids.indexOf(Number(li.dataset.id));
  const nav = el("div", "branches");
  nav.setAttribute("role", "group");
  // Not "message" in the name: the composer is the page's one field labelled so.
  nav.setAttribute("aria-label", li.dataset.role === "user" ? "Versions of what you wrote" : "Versions of the reply");
  const arrow = (which, text, label, target) => {
    const b = el("button", "secondary small", text);
    b.type = "button";
    b.dataset.branch = which;
    b.setAttribute("aria-label", label);
    if (target !== undefined) b.dataset.target = target;
    b.disabled = target === undefined;
    b.addEventListener("click", () => show(target, which));
    return b;
  };
  const count = el("span", "branch-count", `${at + 1}/${ids.length}`);
  count.setAttribute("aria-label", `Version ${at + 1} of ${ids.length}`);
  nav.append(arrow("prev", "‹", "Previous version", ids[at - 1]), count, arrow("next", "›", "Next version", ids[at + 1]));
  part(li, "msg-actions").before(nav);
}

// The buttons under a message: [{label, run, style?}] plus Copy on every reply with text.
export function setActions(li, actions) {
  const row = part(li, "msg-actions");
  const copyable = li.dataset.role === "assistant" && li.source && li.dataset.status !== "streaming";
  // The same buttons are kept, not made again: a click landing while they were replaced was
  // lost (its mousedown on the old button, its mouseup on the new), and so was their focus.
  const key = [copyable ? "Copy" : "", ...actions.map(({ label }) => label)].join("|");
  if (row.dataset.key === key) {
    row.hidden = !row.childElementCount || li.classList.contains("editing");
    return;
  }
  row.dataset.key = key;
  const buttons = actions.map(({ label, run, style }) => {
    const b = el("button", `small ${style || "secondary"}`, label);
    b.type = "button";
    b.addEventListener("click", () => run(li));
    return b;
  });
  if (copyable) {
    const copy = el("button", "secondary small", "Copy");
    copy.type = "button";
    copy.setAttribute("aria-label", "Copy the reply");
    copy.addEventListener("click", () => copyText(li.source, copy));
    buttons.unshift(copy);
  }
  row.replaceChildren(...buttons);
  row.hidden = !buttons.length || li.classList.contains("editing");
}

// Edit in place: an owner message becomes a textarea with Save & resend and Cancel (an
// earlier one starts a new branch from there; the old one stays, behind "‹ 1/2").
export function edit(li, { save, cancel }) {
  const body = part(li, "body");
  const form = el("form", "edit");
  const label = el("label", "sr-only", "Edit your message");
  const area = el("textarea");
  area.id = `edit-${li.dataset.id || "new"}`;
  label.htmlFor = area.id;
  area.value = li.source;
  area.rows = Math.min(8, Math.max(2, li.source.split("\n").length));
  const row = el("div", "row");
  const ok = el("button", "small", "Save & resend");
  ok.type = "submit";
  const no = el("button", "secondary small", "Cancel");
  no.type = "button";
  row.append(ok, no);
  form.append(label, area, row);
  const close = () => {
    form.remove();
    body.hidden = false;
    li.classList.remove("editing");
    part(li, "msg-actions").hidden = !part(li, "msg-actions").childElementCount;
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = area.value.trim();
    if (!text) return;
    close();
    save(text);
  });
  no.addEventListener("click", () => { close(); cancel(); });
  area.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); close(); cancel(); }
    else if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
  });
  li.classList.add("editing");
  body.hidden = true;
  part(li, "msg-actions").hidden = true;
  body.after(form);
  area.focus();
}
