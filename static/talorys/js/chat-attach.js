// The composer's attachments: the Attach button, a file dropped on the thread or the composer,
// a file pasted into the message. Each uploads at once (files-upload.js) and shows a chip with
// its name, its state and Remove; the message is sent with the ids of those uploaded
// ("attachments": the turn gives the model their text, agent/attachments.py). A file still
// being read by the worker is sent too: the model is told it is not ready.
import { api, el } from "../common.js";
import { draggingFiles, uploadFile } from "./files-upload.js";

const WATCH_MS = 1000; // how often a file being read is asked about
const WATCH_TIMES = 300; // then the chip keeps "being read": the message may still go
const STATE_WORDS = { pending: "being read", ready: "ready", failed: "could not be read" };

export function attachments({ root, list, button, picker, input, status }) {
  const chips = []; // { name, file (FileOut, once uploaded), error, li }

  function chip(entry) {
    const li = el("li", "attachment");
    const name = el("span", "attachment-name", entry.name);
    const state = el("span", "attachment-state muted");
    const remove = el("button", "close", "×");
    remove.type = "button";
    remove.setAttribute("aria-label", `Remove ${entry.name}`);
    remove.addEventListener("click", () => {
      chips.splice(chips.indexOf(entry), 1);
      li.remove();
      list.hidden = !chips.length;
      input.focus();
    });
    li.append(name, state, remove);
    entry.li = li;
    entry.state = state;
    return li;
  }

  function show(entry) {
    const { file, error } = entry;
    entry.li.dataset.state = error ? "error" : file ? file.status : "uploading";
    if (error) entry.state.textContent = `not attached: ${error}`;
    else if (!file) entry.state.textContent = "uploading…";
    else entry.state.textContent = file.status === "failed" && file.reason ? `${STATE_WORDS.failed}: ${file.reason}` : STATE_WORDS[file.status] || file.status;
  }

  async function add(files) {
    for (const blob of files) {
      const entry = { name: blob.name || "pasted file", file: null, error: "" };
      chips.push(entry);
      list.appendChild(chip(entry));
      list.hidden = false;
      show(entry);
      try {
        entry.file = await uploadFile(blob);
      } catch (err) {
        entry.error = err.message;
      }
      show(entry);
      if (entry.file && entry.file.status === "pending") watch(entry);
    }
  }

  // A file the worker is reading: its chip says when it is ready (or why it failed).
  async function watch(entry) {
    for (let n = 0; n < WATCH_TIMES && chips.includes(entry); n += 1) {
      await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
      try {
        entry.file = await api(`/api/files/${Number(entry.file.id)}`);
      } catch {
        return; // gone to the bin meanwhile: the send will say so
      }
      show(entry);
      if (entry.file.status !== "pending") return;
    }
  }

  button.addEventListener("click", () => picker.click());
  picker.addEventListener("change", () => {
    add([...picker.files]);
    picker.value = "";
  });
  input.addEventListener("paste", (e) => {
    const files = [...(e.clipboardData ? e.clipboardData.files : [])];
    if (!files.length) return;
    e.preventDefault();
    add(files);
  });
  root.addEventListener("dragover", (e) => {
    if (!draggingFiles(e)) return;
    e.preventDefault();
    root.classList.add("dropping");
  });
  root.addEventListener("dragleave", (e) => {
    if (!root.contains(e.relatedTarget)) root.classList.remove("dropping");
  });
  root.addEventListener("drop", (e) => {
    root.classList.remove("dropping");
    if (!draggingFiles(e)) return;
    e.preventDefault();
    add([...e.dataTransfer.files]);
  });

  return {
    // Why the message cannot go yet, or "".
    problem() {
      if (chips.some((c) => !c.file && !c.error)) return "Wait for the upload to finish, then send.";
      return "";
    },
    // The uploaded files the message carries (those that failed to upload are left out).
    files() {
      return chips.filter((c) => c.file).map((c) => c.file);
    },
    clear() {
      chips.length = 0;
      list.replaceChildren();
      list.hidden = true;
      if (status && status.dataset.attach) status.textContent = "";
    },
  };
}
