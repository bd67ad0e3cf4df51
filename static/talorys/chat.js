// The chat page: one WebSocket to /ws/chat/, the JSON API for conversations and approvals.
// All model and owner text is inserted with textContent, never as HTML.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const messages = $("messages");
  const form = $("composer");
  const input = $("text");
  const cancel = $("cancel");
  const status = $("status");
  let conversationId = null;
  let busy = false;
  let socket = null;
  let current = null; // the assistant <li> being streamed

  const { api, el } = window.Talorys;

  function addMessage(role, text, state) {
    const li = el("li", `msg ${role}` + (state && state !== "complete" ? ` ${state}` : ""));
    li.appendChild(el("div", "body", text || ""));
    li.appendChild(el("div", "tools"));
    messages.appendChild(li);
    li.scrollIntoView({ block: "end" });
    return li;
  }

  function toolLine(li, activity) {
    const tools = li.querySelector(".tools");
    if (activity.status === "awaiting_approval" && activity.action_id) {
      tools.appendChild(approvalCard(activity));
      return;
    }
    tools.appendChild(el("div", `tool ${activity.status}`, `${activity.tool}: ${activity.summary || activity.status}`));
  }

  // An approval card shows the action's current state: a card from an older message may have
  // been decided (or have expired) since, so it asks the server before offering buttons.
  function approvalCard(activity) {
    const card = el("div", "approval");
    card.dataset.actionId = activity.action_id;
    card.appendChild(el("strong", "", activity.summary || activity.tool));
    const state = el("span", "approval-state", " waiting for your approval");
    const buttons = el("div", "buttons");
    card.append(state, buttons);

    const button = (label, verb, secondary) => {
      const b = el("button", secondary ? "secondary" : "", label);
      b.type = "button";
      b.addEventListener("click", () => decide(verb));
      return b;
    };
    const show = (action) => {
      const undoable = action.status === "committed" && action.undo_until && new Date(action.undo_until) > new Date();
      if (action.status === "pending") {
        state.textContent = " waiting for your approval";
        buttons.replaceChildren(button("Approve", "approve"), button("Reject", "reject", true));
      } else {
        state.textContent = ` ${action.status}` + (action.error ? `: ${action.error}` : "");
        buttons.replaceChildren(...(undoable ? [button("Undo", "undo", true)] : []));
      }
    };
    const decide = async (verb) => {
      buttons.querySelectorAll("button").forEach((b) => (b.disabled = true));
      try {
        show(await api(`/api/approvals/${activity.action_id}/${verb}`, { method: "POST" }));
      } catch (err) {
        state.textContent = ` ${err.message}`;
        api(`/api/approvals/${activity.action_id}`).then(show).catch(() => {});
      }
    };
    api(`/api/approvals/${activity.action_id}`)
      .then(show)
      .catch((err) => (state.textContent = ` ${err.message}`));
    return card;
  }

  // Send is offered only while the socket is open and no reply is streaming, so a message is
  // never dropped on the floor while the socket (re)connects.
  function setBusy(value) {
    busy = value;
    refreshSend();
  }

  function refreshSend() {
    const open = socket && socket.readyState === WebSocket.OPEN;
    $("send").disabled = busy || !open;
    cancel.hidden = !busy;
  }

  function onEvent(event) {
    if (event.conversation_id) conversationId = event.conversation_id;
    switch (event.type) {
      case "title":
        loadConversations();
        break;
      case "start":
        current = addMessage("assistant", "", "streaming");
        break;
      case "text":
        if (!current) current = addMessage("assistant", "", "streaming");
        current.querySelector(".body").textContent += event.delta;
        break;
      case "tool":
        if (current) toolLine(current, event.activity);
        break;
      case "error":
        status.textContent = event.message;
        if (current) current.classList.add("error");
        break;
      case "done":
        if (current) current.classList.remove("streaming");
        if (current && event.status !== "complete") current.classList.add(event.status);
        current = null;
        setBusy(false);
        break;
    }
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/ws/chat/`);
    refreshSend();
    socket.addEventListener("open", refreshSend);
    socket.addEventListener("message", (e) => onEvent(JSON.parse(e.data)));
    socket.addEventListener("close", () => {
      if (busy) setBusy(false);
      refreshSend();
      setTimeout(connect, 1500);
    });
  }

  async function loadConversations() {
    const list = $("conversation-list");
    try {
      const page = await api("/api/conversations?limit=50");
      list.replaceChildren(
        ...page.items.map((c) => {
          const li = el("li");
          const a = el("a", c.id === conversationId ? "active" : "", c.title || `Conversation ${c.id}`);
          a.href = `#${c.id}`;
          a.addEventListener("click", (e) => {
            e.preventDefault();
            openConversation(c.id);
          });
          li.appendChild(a);
          return li;
        })
      );
    } catch (err) {
      status.textContent = err.message;
    }
  }

  async function openConversation(id) {
    const convo = await api(`/api/conversations/${id}`);
    conversationId = id;
    messages.replaceChildren();
    for (const m of convo.messages) {
      const li = addMessage(m.role, m.content, m.status);
      (m.tool_activity || []).forEach((a) => toolLine(li, a));
    }
    loadConversations();
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || busy || !socket || socket.readyState !== WebSocket.OPEN) return;
    addMessage("user", text);
    status.textContent = "";
    setBusy(true);
    socket.send(JSON.stringify({ type: "send", text, conversation_id: conversationId }));
    input.value = "";
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  cancel.addEventListener("click", () => {
    if (socket && conversationId) socket.send(JSON.stringify({ type: "cancel", conversation_id: conversationId }));
  });
  $("new-chat").addEventListener("click", () => {
    conversationId = null;
    messages.replaceChildren();
    loadConversations();
    input.focus();
  });

  api("/api/settings")
    .then((s) => ($("demo-banner").hidden = s.provider !== "demo"))
    .catch(() => {});
  connect();
  loadConversations();
})();
