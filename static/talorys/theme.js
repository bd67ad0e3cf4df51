// Light or dark before the first paint: the owner's choice on this device, else the system's.
// A classic script, not a module: base.html runs it in the head, before the first paint (a module
// would wait for the whole page), so a dark page never flashes white.
"use strict";
(function () {
  let choice = null;
  try { choice = localStorage.getItem("talorys-theme"); } catch (e) { /* storage off */ }
  const dark = choice ? choice === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.dataset.theme = dark ? "dark" : "light";
})();
