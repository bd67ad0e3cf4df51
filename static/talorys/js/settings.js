// /settings/: the browser's zone for the time zone form, Test connection (POST
// /api/settings/test-connection with what the model form holds, saved or not), push on this
// device (the header's push control, static/talorys/js/notifications.js), and copying a new
// token.
import { api, copyText, el } from "../common.js";
import { push } from "./notifications.js";

const $ = (id) => document.getElementById(id);

// --- the browser's zone ---------------------------------------------------------------------
const zoneSelect = $("time-zone");
const useZone = $("use-browser-zone");
const zoneStatus = $("browser-zone-status");
const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
// Offered only while the form holds another zone: when it already is the browser's, a line
// says so instead of a button that would change nothing.
function offerZone() {
  const same = zoneSelect.value === browserZone;
  useZone.hidden = same;
  if (same) zoneStatus.textContent = `This is this browser's zone.`;
  else if (zoneStatus.textContent === `This is this browser's zone.`) zoneStatus.textContent = "";
}
if (zoneSelect && useZone && browserZone) {
  useZone.textContent = `Use this browser's zone (${browserZone})`;
  offerZone();
  zoneSelect.addEventListener("change", offerZone);
  useZone.addEventListener("click", () => {
    const known = [...zoneSelect.options].some((o) => o.value === browserZone);
    if (!known) {
      zoneStatus.textContent = `This server does not know the zone ${browserZone}; choose it from the list.`;
      return;
    }
    zoneSelect.value = browserZone;
    useZone.hidden = true;
    zoneStatus.textContent = `${browserZone} chosen: save to keep it.`;
    zoneSelect.focus();
  });
}

// --- Test connection ------------------------------------------------------------------------
// The fields Test connection sends, as the form labels them (its refusals name them).
const TEST_LABELS = { base_url: "Server URL", model_base_url: "Server URL", model: "Model", api_key: "API key" };
const test = $("test-connection");
const result = $("test-result");
if (test && result) {
  test.addEventListener("click", async () => {
    const body = {};
    const fields = { base_url: "model-base-url", model: "model-name", api_key: "model-api-key" };
    for (const [key, id] of Object.entries(fields)) {
      const value = $(id).value.trim();
      if (value) body[key] = value;
    }
    test.disabled = true;
    result.className = "test-result";
    delete result.dataset.kind;
    result.replaceChildren(el("span", "", "Testing…"));
    try {
      const answer = await api("/api/settings/test-connection", { method: "POST", body, labels: TEST_LABELS });
      result.className = `test-result ${answer.ok ? "ok" : "err"}`;
      const lines = [];
      if (answer.ok) {
        lines.push(el("strong", "", answer.provider === "demo" ? "Demo model" : "Connected."));
        lines.push(el("span", "", ` ${answer.message}`));
        if (answer.reply) {
          const reply = el("div", "");
          reply.append("It replied: ", el("span", "reply", answer.reply));
          lines.push(reply);
        }
        if (answer.elapsed_ms) lines.push(el("div", "muted", `${answer.elapsed_ms} ms`));
      } else {
        // The kind (bad_response, auth…) is for scripts and tests, not words for the owner.
        result.dataset.kind = answer.kind;
        lines.push(el("strong", "", "Failed."));
        lines.push(el("span", "", ` ${answer.message}`));
      }
      result.replaceChildren(...lines);
    } catch (err) {
      result.className = "test-result err";
      result.replaceChildren(el("strong", "", "Not tested. "), el("span", "", err.message));
    } finally {
      test.disabled = false;
    }
  });
}

// --- push on this device ----------------------------------------------------------------------
const pushButton = $("settings-push-toggle");
const pushStatus = $("settings-push-status");
if (pushButton && pushStatus) {
  const label = (on) =>
    on ? "Turn off notifications on this device" : "Turn on notifications on this device";
  const capable = "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
  if (!capable) {
    pushStatus.textContent = "This browser cannot receive push notifications here (it needs https or localhost).";
  } else if (!push) {
    // The header's script does not offer its control to this page: point at the one it has.
    pushStatus.textContent = "Use the switch at the bottom of the Notifications panel, at the top of the page.";
  } else {
    push.state().then(
      (on) => {
        pushButton.textContent = label(on);
        pushButton.disabled = false;
        pushStatus.textContent = on ? "This device shows notifications." : "This device does not show notifications.";
      },
      (err) => (pushStatus.textContent = `Push is unavailable: ${err.message}`),
    );
    pushButton.addEventListener("click", async () => {
      pushButton.disabled = true;
      try {
        const { on, message } = await push.toggle();
        pushButton.textContent = label(on);
        pushStatus.textContent = message;
      } catch (err) {
        pushStatus.textContent = `That did not work: ${err.message}`;
      } finally {
        pushButton.disabled = false;
      }
    });
  }
}

// --- a new token, shown once; the MCP and /v1 addresses (their buttons' data-copy) -----------
const copy = $("copy-token");
if (copy) copy.addEventListener("click", () => copyText($("new-token-secret").textContent, copy));
document.querySelectorAll("button[data-copy]").forEach((button) => {
  button.addEventListener("click", () => copyText(button.dataset.copy, button));
});
