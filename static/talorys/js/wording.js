// What a page shows of an error message: the field as the page labels it, in plain words.
// The same rules as talorys/lib/wording.py (its docstring says why); WORDING below is a copy of
// that module's table, and tests/lib/test_wording.py fails when the two differ.
// The API's messages and codes stay as they are; only what a person reads is put plainly.

// prettier-ignore
const WORDING = {"rules": [["^Value error, ", ""], ["^Input should be greater than or equal to (\\S+?)\\.?$", "must be $1 or more"], ["^Input should be less than or equal to (\\S+?)\\.?$", "must be $1 or less"], ["^Input should be greater than (\\S+?)\\.?$", "must be more than $1"], ["^Input should be less than (\\S+?)\\.?$", "must be less than $1"], ["^Input should be a valid integer.*$", "must be a whole number"], ["^Input should be a valid number.*$", "must be a number"], ["^Input should be a valid (date|time|datetime|URL|email).*$", "is not a valid $1"], ["^String should have at most (\\d+) characters?\\.?$", "is longer than $1 characters"], ["^String should have at least 1 character\\.?$", "must not be empty"], ["^String should have at least (\\d+) characters\\.?$", "needs at least $1 characters"], ["^List should have at least 1 item.*$", "needs at least one choice"], ["^Field required\\.?$", "is missing: fill it in"], ["^Extra inputs are not permitted\\.?$", "is not something this form sets"], ["^Input should be (.+?)\\.?$", "must be $1"], ["^must not be empty\\.?$", "is empty: fill it in"], ["^is longer than (\\d+) characters\\.?$", "is longer than $1 characters: shorten it"], ["^must start with http:// or https://\\.?$", "must start with http:// or https://, e.g. http://localhost:11434/v1"]], "field_first": "^([a-z][a-z0-9_]*(?:\\.[a-z0-9_]+)*)(?::\\s*|\\s+(?=(?:must|is|should|needs|cannot|can)\\b))", "separator": "; (?=[a-z][a-z0-9_]*(?:\\.[a-z0-9_]+)*(?::|\\s+(?:must|is|should|needs|cannot|can)\\b))", "lead": "^Invalid frame: ", "capitals": {"url": "URL", "api": "API", "id": "ID", "ai": "AI"}};

const RULES = WORDING.rules.map(([pattern, replacement]) => [new RegExp(pattern), replacement]);
const FIELD_FIRST = new RegExp(WORDING.field_first);
const SEPARATOR = new RegExp(WORDING.separator);
const LEAD = new RegExp(WORDING.lead);
const VERB = /^(must|is|needs|cannot|can|should)\b/;

// A field's name in words, for a field the page gave no label: "model_base_url" → "Model base URL".
export function fieldWords(name) {
  const last = name.split(".").pop().replace(/_(id|at)$/, "");
  const text = last.split("_").filter(Boolean).map((w) => WORDING.capitals[w] || w).join(" ") || name;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function plainWords(text) {
  let said = text.trim();
  for (const [pattern, replacement] of RULES) said = said.replace(pattern, replacement);
  return said;
}

function sentence(text) {
  const said = text.trim();
  const upper = said.charAt(0).toUpperCase() + said.slice(1);
  return /[.!?…]$/.test(upper) ? upper : `${upper}.`;
}

// Other fields a message names after its first ("must not be after valid_to"), by their labels:
// only names with an underscore, which are never a word of a sentence.
function otherFields(text, labels) {
  const names = Object.keys(labels).filter((n) => n.includes("_")).sort((a, b) => b.length - a.length);
  return names.reduce((said, name) => said.replace(new RegExp(`\\b${name}\\b`, "g"), labels[name]), text);
}

function part(message, labels) {
  const match = message.match(FIELD_FIRST);
  if (!match) return { field: null, text: sentence(plainWords(message)) };
  const field = match[1];
  const label = labels[field] || labels[field.split(".").pop()] || fieldWords(field);
  const rest = otherFields(plainWords(message.slice(match[0].length)), labels);
  if (rest.toLowerCase().startsWith(`${label.toLowerCase()} `)) return { field, text: sentence(rest) };
  if (VERB.test(rest)) return { field, text: sentence(`${label} ${rest}`) };
  return { field, text: sentence(`${label}: ${rest.charAt(0).toUpperCase()}${rest.slice(1)}`) };
}

// Each problem of `message`: the field it names (as the API names it, or null) and its text.
export function plainParts(message, labels = {}) {
  return String(message || "").trim().replace(LEAD, "").split(SEPARATOR)
    .filter((piece) => piece.trim())
    .map((piece) => part(piece, labels));
}

// `message` as a page shows it: one sentence per problem.
export function plainMessage(message, labels = {}) {
  return plainParts(message, labels).map((p) => p.text).join(" ");
}
