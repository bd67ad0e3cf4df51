// /settings/#channels: the owner's notification channels (an ntfy topic, a Telegram chat, an
// email address, a webhook: Apprise URLs) through /api/channels. The settings view may not
// import talorys.notifications, so the card's content comes from the API: the rows, the kinds a
// channel may get and their labels (GET /api/channels/kinds, KIND_LABELS on the server).
// The address is write-only: a row shows the API's masked_url, the edit form has an empty
// "New address" field, and nothing here ever holds a saved URL. Errors show at the top of the
// form and by their field (a message starts with the field's name: "url is not an address...",
// "name: ..."; a 409 is about the name), what was typed is kept, and the field gets the focus.
import { api, el, when } from "../common.js";

const $ = (id) => document.getElementById(id);
const LIMIT = 100;
let kinds = []; // [{kind, label}], in the order the page shows them

// --- errors -----------------------------------------------------------------------------------

const FIELDS = ["name", "url", "kinds"];

// Which field an error is about, and what to say by it: a 422 of the schema names it in its
// details' loc (["body", "payload", "name"]), the services' messages start with it, a 409 is
// about the name.
function problemOf(err) {
  for (const detail of Array.isArray(err.details) ? err.details : []) {
    const field = (detail.loc || []).find((part) => FIELDS.includes(part));
    if (field) return { field, text: detail.message, named: false };
  }
  if (err.code === "CONFLICT") return { field: "name", text: err.message, named: true };
  const match = /^(name|url|kinds)\b/.exec(err.raw || err.message || "");
  return { field: match ? match[1] : null, text: err.message, named: true };
}

function clearErrors(form) {
  form.querySelectorAll(".form-error, .field-error").forEach((p) => (p.textContent = ""));
  form.querySelectorAll("[aria-invalid]").forEach((node) => node.removeAttribute("aria-invalid"));
}

function showError(form, prefix, err) {
  const { field, text, named } = problemOf(err);
  const slot = field && $(`${prefix}-${field}-error`);
  if (!slot) {
    $(`${prefix}-form-error`).textContent = `Not saved: ${err.message}`;
    return;
  }
  slot.textContent = text;
  const input = field === "kinds" ? $(`${prefix}-kinds`).querySelector("input") : $(`${prefix}-${field}`);
  const label = field === "kinds" ? "What it gets" : form.querySelector(`label[for="${input.id}"]`).textContent;
  $(`${prefix}-form-error`).textContent = `Not saved: ${named ? text : `${label}: ${text}`}`;
  if (field !== "kinds") input.setAttribute("aria-invalid", "true");
  if (input) input.focus();
}

// --- the pieces of a form ---------------------------------------------------------------------

function kindBoxes(prefix, chosen) {
  return kinds.map(({ kind, label }) => {
    const box = el("input");
    box.type = "checkbox";
    box.name = "kinds";
    box.value = kind;
    box.id = `${prefix}-kind-${kind}`;
    box.checked = chosen.includes(kind);
    const wrap = el("label", "check");
    wrap.htmlFor = box.id;
    wrap.append(box, ` ${label}`);
    return wrap;
  });
}

function chosenKinds(form) {
  return [...form.querySelectorAll('input[name="kinds"]:checked')].map((box) => box.value);
}

// A labelled input with its help and its error slot: ids `${prefix}-${name}` and so on.
function field(prefix, name, label, { value = "", help = "", placeholder = "" } = {}) {
  const wrap = el("div", "field");
  const input = el("input");
  input.id = `${prefix}-${name}`;
  input.name = name;
  input.value = value;
  input.autocomplete = "off";
  if (placeholder) input.placeholder = placeholder;
  const tag = el("label", "", label);
  tag.htmlFor = input.id;
  const error = el("p", "error field-error");
  error.id = `${input.id}-error`;
  const described = [error.id];
  wrap.append(tag, input);
  if (help) {
    const note = el("p", "muted small help", help);
    note.id = `${input.id}-help`;
    described.unshift(note.id);
    wrap.append(note);
  }
  input.setAttribute("aria-describedby", described.join(" "));
  wrap.append(error);
  return wrap;
}

function kindsFieldset(prefix, chosen) {
  const set = el("fieldset", "channel-kinds");
  set.id = `${prefix}-kinds`;
  set.setAttribute("aria-describedby", `${prefix}-kinds-error`);
  const boxes = el("div", "kind-boxes");
  boxes.append(...kindBoxes(prefix, chosen));
  const error = el("p", "error field-error");
  error.id = `${prefix}-kinds-error`;
  set.append(el("legend", "", "What it gets"), boxes, error);
  return set;
}

// --- a row ------------------------------------------------------------------------------------

function timeOf(iso) {
  const node = el("time", "", when(iso));
  node.setAttribute("datetime", iso);
  return node;
}

function kindsText(list) {
  if (list.length === kinds.length) return "Gets every kind of notification.";
  if (!list.length) return "Gets nothing: tick some kinds in Edit.";
  const labels = kinds.filter(({ kind }) => list.includes(kind)).map(({ label }) => label);
  return `Gets: ${labels.join(", ")}.`;
}

// "Last delivered", or the error when the latest send failed.
function stateLine(channel) {
  const line = el("p", "small channel-state");
  const { last_failure_at: failedAt, last_success_at: sentAt } = channel;
  const failed = failedAt && (!sentAt || Date.parse(failedAt) > Date.parse(sentAt));
  if (failed) {
    line.classList.add("error");
    line.append("Last failed ", timeOf(channel.last_failure_at), `: ${channel.last_error || "no reason given."}`);
  } else if (channel.last_success_at) {
    line.append("Last delivered ", timeOf(channel.last_success_at));
  } else {
    line.classList.add("muted");
    line.textContent = "Nothing sent yet.";
  }
  return line;
}

function button(text, className, label) {
  const node = el("button", className, text);
  node.type = "button";
  if (label) node.setAttribute("aria-label", label);
  return node;
}

function channelRow(channel) {
  const row = el("li", "channel");
  row.dataset.id = channel.id;
  const head = el("div", "channel-head");
  head.append(el("strong", "channel-name", channel.name), " ", el("span", "tag", channel.service));
  if (!channel.enabled) head.append(" ", el("span", "tag warn", "off"));
  const result = el("p", "small channel-test");
  result.setAttribute("role", "status");
  const actions = el("div", "row channel-actions");
  const test = button("Send a test", "small secondary", `Send a test to “${channel.name}”`);
  const edit = button("Edit", "small secondary", `Edit “${channel.name}”`);
  const remove = button("Delete", "small danger", `Delete “${channel.name}”`);
  edit.setAttribute("aria-expanded", "false");
  edit.dataset.action = "edit";
  actions.append(test, edit, remove);
  row.append(head, el("code", "channel-url", channel.masked_url), el("p", "muted small", kindsText(channel.kinds)));
  row.append(stateLine(channel), actions, result);
  test.addEventListener("click", () => sendTest(channel, test, result, row));
  edit.addEventListener("click", () => toggleEdit(channel, edit, row));
  remove.addEventListener("click", () => removeChannel(channel, remove));
  return row;
}

// --- what a row's buttons do ------------------------------------------------------------------

async function sendTest(channel, test, result, row) {
  test.disabled = true;
  result.className = "small channel-test";
  result.textContent = "Sending…";
  try {
    const answer = await api(`/api/channels/${channel.id}/test`, { method: "POST" });
    result.classList.add(answer.sent ? "ok" : "error");
    result.textContent = answer.sent ? "Sent" : `Not sent: ${answer.error}`;
    const fresh = await api(`/api/channels/${channel.id}`);
    row.querySelector(".channel-state").replaceWith(stateLine(fresh));
  } catch (err) {
    result.classList.add("error");
    result.textContent = `Not sent: ${err.message}`;
  } finally {
    test.disabled = false;
  }
}

function editForm(channel, done) {
  const prefix = `channel-${channel.id}`;
  const form = el("form", "stack channel-edit");
  form.id = `${prefix}-edit`;
  form.noValidate = true;
  form.setAttribute("aria-label", `Edit the channel “${channel.name}”`);
  const top = el("p", "error form-error");
  top.id = `${prefix}-form-error`;
  top.setAttribute("role", "alert");
  const on = el("input");
  on.type = "checkbox";
  on.id = `${prefix}-enabled`;
  on.checked = channel.enabled;
  const onLabel = el("label", "check");
  onLabel.htmlFor = on.id;
  onLabel.append(on, " On: send notifications to this channel");
  const help = `Leave it empty to keep the current address (${channel.masked_url}).`;
  const save = el("button", "", "Save");
  save.type = "submit";
  const cancel = button("Cancel", "secondary");
  cancel.addEventListener("click", () => done(false));
  const actions = el("div", "row");
  actions.append(save, cancel);
  form.append(top, field(prefix, "name", "Name", { value: channel.name }), kindsFieldset(prefix, channel.kinds), onLabel);
  form.append(field(prefix, "url", "New address", { help, placeholder: "Unchanged" }), actions);
  form.addEventListener("submit", (event) => saveEdit(event, channel, form, save, done));
  return form;
}

async function saveEdit(event, channel, form, save, done) {
  event.preventDefault();
  clearErrors(form);
  const prefix = `channel-${channel.id}`;
  const body = { name: $(`${prefix}-name`).value, kinds: chosenKinds(form), enabled: $(`${prefix}-enabled`).checked };
  const url = $(`${prefix}-url`).value.trim();
  if (url) body.url = url;
  save.disabled = true;
  try {
    const saved = await api(`/api/channels/${channel.id}`, { method: "PATCH", body });
    await load(`“${saved.name}” saved.`, saved.id);
  } catch (err) {
    showError(form, prefix, err);
  } finally {
    save.disabled = false;
  }
}

function toggleEdit(channel, edit, row) {
  const open = row.querySelector(".channel-edit");
  if (open) {
    open.remove();
    edit.setAttribute("aria-expanded", "false");
    return;
  }
  const form = editForm(channel, () => {
    form.remove();
    edit.setAttribute("aria-expanded", "false");
    edit.focus();
  });
  row.append(form);
  edit.setAttribute("aria-controls", form.id);
  edit.setAttribute("aria-expanded", "true");
  $(`channel-${channel.id}-name`).focus();
}

async function removeChannel(channel, remove) {
  if (!window.confirm(`Delete the channel “${channel.name}”? Notifications stop going there.`)) return;
  remove.disabled = true;
  try {
    await api(`/api/channels/${channel.id}`, { method: "DELETE" });
    await load(`“${channel.name}” deleted.`);
    $("channel-name").focus();
  } catch (err) {
    remove.disabled = false;
    $("channels-status").textContent = `Not deleted: ${err.message}`;
  }
}

// --- the list and the add form ----------------------------------------------------------------

// The rows afresh; ``said`` is announced, and ``focusId``'s Edit button gets the focus.
async function load(said, focusId) {
  const list = $("channel-list");
  const status = $("channels-status");
  const page = await api(`/api/channels?limit=${LIMIT}`);
  list.replaceChildren(...page.items.map(channelRow));
  list.hidden = !page.items.length;
  const count = page.items.length ? "" : "No channels yet: notifications show on this site and, with push, on your devices.";
  const more = page.count > page.items.length ? ` Showing the first ${page.items.length} of ${page.count}.` : "";
  status.textContent = `${said || ""} ${count}${more}`.trim();
  if (focusId) {
    const row = list.querySelector(`li[data-id="${focusId}"]`);
    if (row) row.querySelector('[data-action="edit"]').focus();
  }
}

async function add(event) {
  event.preventDefault();
  const form = event.target;
  clearErrors(form);
  const body = { name: $("channel-name").value, url: $("channel-url").value, kinds: chosenKinds(form) };
  const submit = $("channel-add");
  submit.disabled = true;
  try {
    const saved = await api("/api/channels", { method: "POST", body });
    form.reset(); // the kinds go back to all ticked (their default)
    await load(`“${saved.name}” added.`, saved.id);
  } catch (err) {
    showError(form, "channel", err);
  } finally {
    submit.disabled = false;
  }
}

async function setUp() {
  const form = $("channel-form");
  if (!form) return;
  try {
    kinds = await api("/api/channels/kinds");
    const boxes = kindBoxes("channel", kinds.map(({ kind }) => kind));
    boxes.forEach((wrap) => (wrap.querySelector("input").defaultChecked = true));
    form.querySelector("[data-kinds]").replaceChildren(...boxes);
    await load();
  } catch (err) {
    $("channels-status").textContent = `The channels could not be loaded: ${err.message}`;
    return;
  }
  form.addEventListener("submit", add);
  form.hidden = false;
}

setUp();
