// The Files page: upload (the button, or files dropped on the page) through POST /api/files,
// each new file added at the top of the list without a reload; Delete moves one to the bin
// (DELETE /api/files/{id}) with Undo, as the other pages do. Names go in as text only.
import { api, el, undoToast } from "../common.js";
import { draggingFiles, sizeText, uploadFile } from "./files-upload.js";

const $ = (id) => document.getElementById(id);
const table = $("files");
const rows = $("file-rows");
const empty = $("files-empty");
const status = $("upload-status");
const zone = $("upload");
const STATE_WORDS = { pending: "being read", ready: "ready", failed: "could not be read" };

function shown() {
  table.hidden = !rows.children.length;
  empty.hidden = !!rows.children.length;
}

function cell(label, ...children) {
  const td = el("td");
  td.dataset.label = label;
  td.append(...children);
  return td;
}

function row(file) {
  const tr = el("tr");
  tr.id = `file-${file.id}`;
  tr.dataset.id = file.id;
  tr.dataset.name = file.name;
  const url = `/files/${file.id}/content`;
  const link = el("a", "", file.name);
  link.href = url;
  link.target = "_blank";
  link.rel = "noopener";
  const state = el("span", `tag state-${file.status}`, STATE_WORDS[file.status] || file.status);
  const statusCell = cell("Status", state);
  if (file.status === "failed" && file.reason) statusCell.append(el("br"), el("span", "muted", file.reason));
  const download = el("a", "button small secondary", "Download");
  download.href = url;
  download.download = file.name;
  download.setAttribute("aria-label", `Download ${file.name}`);
  const remove = el("button", "small secondary delete", "Delete");
  remove.type = "button";
  remove.setAttribute("aria-label", `Delete ${file.name}`);
  const actions = el("td", "actions");
  actions.append(download, " ", remove);
  tr.append(cell("Name", link), cell("Type", file.content_type), cell("Size", sizeText(file.size)), statusCell, cell("Used in", el("span", "muted", "not yet")), actions);
  return tr;
}

async function upload(files) {
  for (const file of files) {
    status.textContent = `Uploading ${file.name}…`;
    try {
      const stored = await uploadFile(file);
      rows.prepend(row(stored));
      shown();
      status.textContent = `Uploaded ${stored.name}.`;
    } catch (err) {
      status.textContent = `${file.name} was not uploaded: ${err.message}`;
    }
  }
}

$("upload-button").addEventListener("click", () => $("upload-input").click());
$("upload-input").addEventListener("change", (e) => {
  upload([...e.target.files]);
  e.target.value = "";
});
document.addEventListener("dragover", (e) => {
  if (!draggingFiles(e)) return;
  e.preventDefault();
  zone.classList.add("dropping");
});
document.addEventListener("dragleave", (e) => {
  if (!e.relatedTarget) zone.classList.remove("dropping");
});
document.addEventListener("drop", (e) => {
  zone.classList.remove("dropping");
  if (!draggingFiles(e)) return;
  e.preventDefault();
  upload([...e.dataTransfer.files]);
});

rows.addEventListener("click", async (e) => {
  const button = e.target.closest("button.delete");
  if (!button) return;
  const tr = button.closest("tr");
  const next = tr.nextElementSibling;
  button.disabled = true;
  try {
    await api(`/api/files/${Number(tr.dataset.id)}`, { method: "DELETE" });
  } catch (err) {
    status.textContent = err.message;
    button.disabled = false;
    return;
  }
  tr.remove();
  shown();
  undoToast(`${tr.dataset.name} moved to the bin`, {
    kind: "file",
    id: tr.dataset.id,
    onRestored: () => {
      button.disabled = false;
      if (next && next.isConnected) next.before(tr);
      else rows.append(tr);
      shown();
    },
  });
});
