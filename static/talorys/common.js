// Helpers shared by the owner pages' scripts (loaded first, from base.html).
"use strict";

window.Talorys = (function () {
  function csrf() {
    const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }

  // JSON to and from /api/ with the session cookie and the CSRF header; an error answer
  // becomes an Error carrying the envelope's message.
  async function api(path, options = {}) {
    const init = { credentials: "same-origin", headers: { "X-CSRFToken": csrf() }, ...options };
    if (init.body && typeof init.body !== "string") {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(init.body);
    }
    const response = await fetch(path, init);
    const body = response.status === 204 ? null : await response.json();
    if (!response.ok) throw new Error(body && body.error ? body.error.message : response.statusText);
    return body;
  }

  // An element with text set as text, never parsed as HTML.
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  return { csrf, api, el };
})();
