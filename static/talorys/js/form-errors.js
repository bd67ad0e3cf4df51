// A refused form, on every page: what went wrong at the top of the form, and the first field in
// error focused, so the owner neither scrolls to find it nor wonders whether it saved.
// Two ways a page says so: the form comes back with its errors (templates/_form_errors.html at
// its top, each field's errors beside it in a box marked .invalid), or the page redirected and
// the message above it names the form's input (templates/_flash.html, data-field; the server's
// say_error in talorys/web/pages.py): that message is moved to the top of the form it is about.
const CONTROLS = "input:not([type=hidden]):not([disabled]), select:not([disabled]), textarea:not([disabled])";

function describe(control, ids) {
  const all = [control.getAttribute("aria-describedby"), ...ids].filter(Boolean);
  control.setAttribute("aria-invalid", "true");
  if (all.length) control.setAttribute("aria-describedby", [...new Set(all.join(" ").split(" "))].join(" "));
}

// A form rendered with its errors: mark each field's controls, focus the first one shown.
function refusedForm(summary) {
  const form = summary.closest("form");
  if (!form) return false;
  let first = null;
  for (const box of form.querySelectorAll(".invalid")) {
    const ids = [...box.querySelectorAll(".error[id]")].map((e) => e.id);
    for (const control of box.querySelectorAll(CONTROLS)) describe(control, ids);
    if (!first && !box.closest("[hidden]")) first = box.querySelector(CONTROLS);
  }
  (first || summary).focus();
  return true;
}

// The input a redirected page's message names: in the part of the page the address points at
// (a section of /settings/), else the first form that has it.
function namedControl(name) {
  const forms = [...document.querySelectorAll("main form")];
  const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  const ordered = target ? [...forms.filter((f) => target.contains(f)), ...forms] : forms;
  for (const form of ordered) {
    const control = [...form.querySelectorAll(CONTROLS)].find((c) => c.name === name);
    if (control && !control.closest("[hidden]")) return control;
  }
  return null;
}

function placeMessage(problem) {
  const control = namedControl(problem.dataset.field);
  if (!control) return false;
  problem.className = "form-problems";
  problem.setAttribute("role", "alert");
  problem.tabIndex = -1;
  control.form.before(problem);
  describe(control, [problem.id]);
  control.focus();
  return true;
}

function showRefusals() {
  const summary = document.querySelector("main .form-problems");
  if (summary && refusedForm(summary)) return;
  const named = document.querySelector(".flash-errors .error[data-field]");
  if (named) placeMessage(named);
}

// After the page has loaded: scrolling to the address's #section focuses the viewport, and
// would take the focus from the field.
if (document.readyState === "complete") showRefusals();
else window.addEventListener("load", () => setTimeout(showRefusals), { once: true });
