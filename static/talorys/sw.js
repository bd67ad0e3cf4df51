// The service worker, served at /sw.js so that its scope is the whole site. It shows Web Push
// messages (the JSON talorys/notifications/push.py sends: id, title, body, kind, url, and for a
// waiting approval its actions and what deciding needs) and, when one is clicked, opens its url
// (a conversation, an approval, or the notifications) in a tab of the app, or in a new one. A
// click on an approval's Approve or Reject button decides it without opening a page: the button's
// capability, which only that push carried, is posted to the server (approvals/push_decision.py),
// and the notification then says what happened. It holds no data and intercepts no requests.
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

const DECISIONS = { approve: "approve", reject: "reject" };

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (err) {
    data = { body: event.data.text() };
  }
  const decide = data.decide && typeof data.decide.url === "string" ? data.decide : null;
  event.waitUntil(
    self.registration.showNotification(data.title || "Talorys", {
      body: data.body || "",
      // One entry per notification, even if the push service delivers it twice.
      tag: data.id ? `notification-${data.id}` : undefined,
      actions: decide && Array.isArray(data.actions) ? data.actions : [],
      data: { id: data.id, url: data.url, decide },
    })
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  if (DECISIONS[event.action]) {
    event.waitUntil(decideFromNotification(event.notification, event.action));
    return;
  }
  event.waitUntil(openUrl((event.notification.data || {}).url));
});

// Post the decision with the button's capability: no cookie (credentials "omit": the capability
// is the credential), JSON (a cross-site page could not send that without a preflight). Then
// replace the notification with what happened, or why nothing was done. Returns what was shown.
async function decideFromNotification(notification, decision) {
  const data = notification.data || {};
  const decide = data.decide || {};
  const capability = (decide.capabilities || {})[decision];
  const verb = decision === "approve" ? "approve" : "reject";
  let title;
  let body;
  try {
    const url = new URL(decide.url || "", self.location.origin);
    if (url.origin !== self.location.origin || !capability) throw new Error("no capability");
    const response = await fetch(url.href, {
      method: "POST",
      credentials: "omit",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ decision, capability }),
    });
    const answer = await response.json().catch(() => ({}));
    if (response.ok) {
      title = answer.title;
      body = answer.body || "";
    } else {
      title = `Could not ${verb}: ${notification.title.replace(/^Waiting for your approval: /, "")}`;
      body = (answer.error && answer.error.message) || `The server answered ${response.status}.`;
    }
  } catch (err) {
    title = `Could not ${verb}: ${notification.title.replace(/^Waiting for your approval: /, "")}`;
    body = "The server could not be reached. Open the approval to decide.";
  }
  const shown = { title: title || "Talorys", body };
  // Same tag: it takes the place of the one that asked. No actions: a button is used once.
  await self.registration.showNotification(shown.title, {
    body: shown.body,
    tag: data.id ? `notification-${data.id}` : undefined,
    data: { id: data.id, url: data.url },
  });
  return shown;
}

function openUrl(url) {
  // Only a path of this site: a push carries no address elsewhere.
  const wanted = new URL(url || "/", self.location.origin);
  const target = wanted.origin === self.location.origin ? wanted.href : self.location.origin + "/";
  return self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
    const open =
      windows.find((w) => w.url === target) ||
      windows.find((w) => new URL(w.url).origin === self.location.origin);
    if (!open) return self.clients.openWindow(target);
    // Focused first, while the click still allows it; a tab this worker does not control
    // refuses navigate(): a new tab then.
    return open
      .focus()
      .then((win) => (win.url === target ? win : win.navigate(target)))
      .catch(() => self.clients.openWindow(target));
  });
}
