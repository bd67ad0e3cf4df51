// The pages' WebSockets (the chat's /ws/chat/, the header's /ws/notifications/) come back after a
// drop the same way: each attempt waits about twice as long as the last, with jitter so that
// every open tab does not reconnect in step after a restart. They stop for good when the session
// has ended, and the page says so, with a link to log in again.
import { api, el } from "../common.js";

// The consumers' close code for "log in first" (WEBSOCKET_UNAUTHENTICATED, talorys/accounts/auth.py).
const UNAUTHENTICATED = 4401;
const FIRST_DELAY_MS = 1000;

// Shown once per page, above the content, however many of its sockets found the session ended.
export function showSessionEnded() {
  if (document.getElementById("session-ended")) return;
  const flash = el("ul", "flash");
  flash.id = "session-ended";
  flash.setAttribute("role", "alert");
  const line = el("li", "error", "Your session has ended. ");
  const login = el("a", "", "Log in again");
  login.href = `/login/?next=${encodeURIComponent(location.pathname + location.search)}`;
  line.append(login);
  flash.append(line);
  document.getElementById("main").before(flash);
}

// `path`'s socket, opened now and again after each close until the session ends. `onMessage`
// gets each frame parsed; `onOpen`, `onClose` (with the close event) and `onSessionEnded` are
// optional. The answer's `socket` is the current one, `isOpen()` whether it can send.
export function reconnectingSocket(path, { onOpen, onMessage, onClose, onSessionEnded = showSessionEnded, maxDelayMs = 30000 }) {
  const handle = { socket: null, isOpen: () => Boolean(handle.socket) && handle.socket.readyState === WebSocket.OPEN };
  let delay = FIRST_DELAY_MS;

  function later() {
    // Half the delay for sure, the other half at random ("equal jitter").
    setTimeout(connect, delay / 2 + (Math.random() * delay) / 2);
    delay = Math.min(delay * 2, maxDelayMs);
  }

  // The socket cannot tell a logged-out page from a server that is down: a handshake the server
  // refuses for want of a session is reported as 1006, like a dropped connection. The API can,
  // with this page's cookie: a page whose session was re-signed (a password change made here)
  // is still logged in and reconnects; one logged out stops.
  async function retryIfSignedIn() {
    let session = null;
    try {
      session = await api("/api/auth/session");
    } catch (err) {
      later(); // the server is not answering: ask again at the next attempt
      return;
    }
    if (session.authenticated) later();
    else onSessionEnded();
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}${path}`);
    let opened = false;
    handle.socket = socket;
    socket.addEventListener("open", () => {
      opened = true;
      delay = FIRST_DELAY_MS;
      if (onOpen) onOpen();
    });
    socket.addEventListener("message", (e) => onMessage(JSON.parse(e.data)));
    socket.addEventListener("close", (e) => {
      if (onClose) onClose(e);
      if (e.code === UNAUTHENTICATED || !opened) retryIfSignedIn();
      else later();
    });
  }

  connect();
  return handle;
}
