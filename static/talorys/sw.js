// The service worker, served at /sw.js so that its scope is the whole site. It only shows Web
// Push messages (the JSON talorys/notifications/push.py sends: id, title, body, kind, url) and,
// when one is clicked, opens its url (a conversation, or the notifications) in a tab of the app,
// or in a new one. It holds no data and does not intercept requests.
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (err) {
    data = { body: event.data.text() };
  }
  event.waitUntil(
    self.registration.showNotification(data.title || "Talorys", {
      body: data.body || "",
      // One entry per notification, even if the push service delivers it twice.
      tag: data.id ? `notification-${data.id}` : undefined,
      data: { id: data.id, url: data.url },
    })
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  // Only a path of this site: a push carries no address elsewhere.
  const wanted = new URL((event.notification.data || {}).url || "/", self.location.origin);
  const target = wanted.origin === self.location.origin ? wanted.href : self.location.origin + "/";
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
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
    })
  );
});
