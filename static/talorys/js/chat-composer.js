// How long the owner's message is, against the longest the API takes (the page's
// data-max-length, agent.services.MAX_MESSAGE_CHARS): a counter from near the limit, and a
// message past it refused here, before it is sent, with what to do. Counted as the server
// counts: characters (code points) of the text as sent (trimmed).

const NEAR = 0.9; // the counter shows from 90 % of the limit
const number = (n) => n.toLocaleString("en-GB");
const characters = (n) => `${number(n)} character${n === 1 ? "" : "s"}`;

export function lengthGuard(input, counter) {
  const max = Number(input.dataset.maxLength) || Infinity;
  const length = (text) => [...text.trim()].length;

  function show() {
    const n = length(input.value);
    const over = n > max;
    counter.hidden = n < max * NEAR;
    counter.classList.toggle("over", over);
    counter.textContent = over
      ? `${characters(n - max)} too long: ${number(n)} of ${number(max)}.`
      : `${number(n)} of ${number(max)} characters.`;
    if (over) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
  input.addEventListener("input", show);

  return {
    // What is wrong with sending `text`, or "" when it can be sent.
    problem(text) {
      const n = length(text);
      if (n <= max) return "";
      return `Not sent: your message is ${characters(n - max)} too long (one message holds up to ${number(max)}). Shorten it, or send it in parts.`;
    },
    show,
  };
}
