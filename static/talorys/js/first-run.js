// The first run: until the owner has chosen a time zone (OwnerSettings.time_zone_confirmed,
// on <body data-time-zone-confirmed>), the first signed-in page takes it from the browser
// through PATCH /api/settings (which marks it chosen), then reloads so every time on the page
// is shown in it. The settings page changes it later.
import { api } from "../common.js";

async function firstRun() {
  const body = document.body;
  if (body.dataset.timeZoneConfirmed !== "false") return;
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const refused = "talorys-first-run-refused";
  try {
    // A zone the server refused once is not sent again from this tab on every page.
    if (!zone || sessionStorage.getItem(refused) === zone) return;
  } catch (e) {
    /* storage off: ask anyway */
  }
  try {
    const saved = await api("/api/settings", { method: "PATCH", body: { time_zone: zone } });
    body.dataset.timeZoneConfirmed = "true";
    if (saved.time_zone !== body.dataset.timeZone) location.reload();
  } catch (err) {
    console.warn("first run: the browser's time zone was not saved", err);
    try {
      if (err.code && /^[A-Z_]+$/.test(err.code)) sessionStorage.setItem(refused, zone);
    } catch (e) {
      /* storage off */
    }
  }
}

firstRun();
