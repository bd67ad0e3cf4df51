// The service worker, served at /sw.js so that its scope is the whole site. It only shows Web
// Push messages (the JSON talorys/notifications/push.py sends: id, title, body, kind) and opens the app when
// one is clicked. It holds no data and does not intercept requests.
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
      data: { id: data.id },
    })
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const home = new URL("/", self.location.origin).href;
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
      const open = windows.find((w) => new URL(w.url).origin === self.location.origin);
      return open ? open.focus() : self.clients.openWindow(home);
    })
  );
});
