// Light or dark before the first paint: the owner's choice on this device, else the system's.
"use strict";
(function () {
  let choice = null;
  try { choice = localStorage.getItem("talorys-theme"); } catch (e) { /* storage off */ }
  const dark = choice ? choice === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.dataset.theme = dark ? "dark" : "light";
})();
