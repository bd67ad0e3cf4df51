// What the server reads in words typed so far (GET /tasks/understand/, talorys/lib/when.py), for
// the hints that say it before anything is added: the tasks page's quick add and the task form's
// "Due in words" (quick-add.js) and the `q` dialog (keys.js). The same reader then reads what is
// sent, so the hint and what is added agree.
const ENDPOINT = "/tasks/understand/";

// The reading of `text` ({title, said, repeats, alone, due, words}), or null when the server
// could not be asked (then the page or the API still refuses or shows what it read).
export async function understand(text, field = "") {
  const params = new URLSearchParams({ text });
  if (field) params.set("field", field);
  try {
    const response = await fetch(`${ENDPOINT}?${params}`, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    return response.ok ? await response.json() : null;
  } catch (e) {
    return null;
  }
}

// Calls onRead(text, reading) a moment after each change of `input`, for the words still in it;
// returns the function that asks again (after a change elsewhere, e.g. the Due field).
export function watch(input, onRead) {
  let timer = null;
  let asked = 0;

  async function read() {
    const text = input.value;
    const mine = ++asked;
    if (!text.trim()) {
      onRead(text, { said: "" });
      return;
    }
    const body = await understand(text, input.dataset.understand === "due" ? "due" : "");
    if (body && mine === asked && input.value === text) onRead(text, body);
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(read, 250);
  }

  input.addEventListener("input", later);
  if (input.value) read();
  return later;
}
