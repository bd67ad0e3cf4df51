// One file to POST /api/files (multipart, the session's CSRF header): the stored file (FileOut),
// or an Error with the server's reason in plain words (too large, a type it refuses). Shared by
// the chat's attachments (chat-attach.js) and the Files page (files.js).
import { csrf } from "../common.js";
import { plainMessage } from "./wording.js";

export async function uploadFile(file) {
  const body = new FormData();
  body.append("file", file, file.name);
  const response = await fetch("/api/files", {
    method: "POST",
    credentials: "same-origin",
    headers: { "X-CSRFToken": csrf() },
    body,
  });
  const answer = await response.json().catch(() => null);
  if (!response.ok) {
    const raw = answer && answer.error ? answer.error.message : response.statusText;
    throw new Error(plainMessage(raw || `The upload failed (${response.status}).`));
  }
  return answer;
}

// "12 KB", "3.4 MB": a file's size for the owner.
export function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB"];
  let n = bytes / 1024;
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) { n /= 1024; unit += 1; }
  return `${n < 10 ? n.toFixed(1) : Math.round(n)} ${units[unit]}`;
}

// Whether a drag carries files (not text or a link from the page).
export const draggingFiles = (e) => !!e.dataTransfer && [...e.dataTransfer.types].includes("Files");
