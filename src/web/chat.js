// The chat page's script: the public API only, run in the browser. It is
// inlined into the page (so the Content-Security-Policy can pin it by hash)
// and type-checked against the DOM by `deno task check`.
/// <reference lib="dom" />
// @ts-check

// Inlined by chat_page.ts, so the page loads nothing: the one import.
import { headerValue } from "../client/header_value.js";

const TOKEN_KEY = "lms-token";
// The log is bounded: a tab left open for days keeps the newest entries.
const MAX_ENTRIES = 500;
const RECONNECT_MS = 3000;

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
function element(id, type) {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`the page has no #${id}`);
  return found;
}

const ui = {
  status: element("status", HTMLElement),
  messages: element("messages", HTMLOListElement),
  joinForm: element("join-form", HTMLFormElement),
  name: element("name", HTMLInputElement),
  joinError: element("join-error", HTMLElement),
  postForm: element("post-form", HTMLFormElement),
  message: element("message", HTMLInputElement),
  postError: element("post-error", HTMLElement),
  me: element("me", HTMLElement),
  leave: element("leave", HTMLButtonElement),
  quotePanel: element("quote-panel", HTMLElement),
  quote: element("quote", HTMLElement),
  quoteForm: element("quote-form", HTMLFormElement),
  quoteText: element("quote-text", HTMLInputElement),
  quoteError: element("quote-error", HTMLElement),
  usersPanel: element("users-panel", HTMLElement),
  users: element("users", HTMLUListElement),
  refreshUsers: element("refresh-users", HTMLButtonElement),
};

/** @type {string | null} */
let token = sessionStorage.getItem(TOKEN_KEY);
/** @type {Set<string>} */
let knownUsers = new Set();

/** The name is everything before the token's first `-`: names cannot hold one. */
function nameOf(/** @type {string} */ credential) {
  return credential.slice(0, credential.indexOf("-"));
}

/**
 * The service's own words for a refusal: the descriptions of a 400
 * envelope, or the message of any other error answer.
 * @param {Response} res
 * @returns {Promise<string[]>}
 */
async function refusalOf(res) {
  try {
    const body = await res.json();
    if (Array.isArray(body?.errors)) {
      return body.errors.map((/** @type {any} */ e) => String(e.description));
    }
    if (typeof body?.message === "string") return [body.message];
  } catch {
    // Not JSON: the status line says what happened.
  }
  return [`${res.status} ${res.statusText}`.trim()];
}

/**
 * Shows each line in `alert` as a line of its own, so two refusals of one
 * request (a quote can fail both checks) never read as one sentence.
 * @param {HTMLElement} alert
 * @param {string | string[]} lines
 */
function showError(alert, lines) {
  const shown = [lines].flat().filter((line) => line !== "");
  alert.replaceChildren(...shown.map((line) => {
    const span = document.createElement("span");
    span.className = "line";
    span.textContent = line;
    return span;
  }));
}

/**
 * Whether the last call reached the service. The status says Live only
 * while it did: an open event stream alone does not mean Send will work.
 */
let callsReach = true;

/**
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<Response | string>} the answer, or why there is none
 */
async function call(path, init = {}) {
  /** @type {Response | string} */
  let answer;
  try {
    answer = await fetch(path, init);
  } catch {
    answer = "The service cannot be reached; try again in a moment.";
  }
  callsReach = typeof answer !== "string";
  showStatus();
  return answer;
}

/** The credential as UTF-8 bytes: as text, fetch refuses names beyond U+00FF. */
function authHeaders() {
  return { "x-messaging-token": headerValue(token ?? "") };
}

function showJoined(/** @type {boolean} */ joined) {
  ui.joinForm.hidden = joined;
  ui.postForm.hidden = !joined;
  ui.usersPanel.hidden = !joined;
  if (joined && token) ui.me.textContent = nameOf(token);
  if (!joined) {
    ui.users.replaceChildren();
    knownUsers = new Set();
  }
}

function signOut(/** @type {string} */ reason) {
  token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  showJoined(false);
  showError(ui.joinError, reason);
  ui.name.focus();
}

/** @type {Promise<void> | null} */
let refreshing = null;
/** Asks for the user list, once at a time however many ask. */
function refreshUsers() {
  refreshing ??= loadUsers().finally(() => refreshing = null);
  return refreshing;
}

async function loadUsers() {
  if (!token) return;
  const res = await call("/users", { headers: authHeaders() });
  if (typeof res === "string") return;
  if (res.status === 401) {
    signOut("You are no longer signed in; join again.");
    return;
  }
  if (!res.ok) return;
  const { users } = await res.json();
  knownUsers = new Set(users);
  ui.users.replaceChildren(
    ...users.map((/** @type {string} */ user) => {
      const item = document.createElement("li");
      item.textContent = user;
      return item;
    }),
  );
}

function trimLog() {
  while (ui.messages.childElementCount > MAX_ENTRIES) {
    ui.messages.firstElementChild?.remove();
  }
}

/** Appends an entry, following the newest only when the reader was already there. */
function appendEntry(/** @type {HTMLLIElement} */ entry) {
  const list = ui.messages;
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.append(entry);
  trimLog();
  if (atBottom) list.scrollTop = list.scrollHeight;
}

function notice(/** @type {string} */ text) {
  const entry = document.createElement("li");
  entry.className = "notice";
  entry.textContent = text;
  appendEntry(entry);
}

/** Everything other people wrote goes in as text, never as markup. */
function showMessage(/** @type {any} */ message) {
  const user = String(message?.user ?? "");
  const entry = document.createElement("li");
  entry.className = "message";
  if (message?.color === "red") entry.classList.add("red");
  if (token && user === nameOf(token)) entry.classList.add("mine");
  const author = document.createElement("span");
  author.className = "author";
  author.textContent = user;
  const text = document.createElement("span");
  text.className = "text";
  text.textContent = String(message?.text ?? "");
  entry.append(author, text);
  appendEntry(entry);
  if (token && user && !knownUsers.has(user)) refreshUsers();
}

/**
 * Follows an event stream. `EventSource` reconnects by itself (resuming
 * with Last-Event-ID); when the server refuses it outright, a new one is
 * opened after a pause, and `onFresh` is told its catch-up starts over.
 * @param {string} path
 * @param {Record<string, (data: string) => void>} handlers
 * @param {() => void} onFresh
 */
function follow(path, handlers, onFresh) {
  const source = new EventSource(path);
  let opened = false;
  source.onopen = () => {
    if (!opened) onFresh();
    opened = true;
    liveStreams.set(path, true);
    showStatus();
  };
  source.onerror = () => {
    liveStreams.set(path, false);
    showStatus();
    if (source.readyState === EventSource.CLOSED) {
      setTimeout(() => follow(path, handlers, onFresh), RECONNECT_MS);
    }
  };
  for (const [name, handle] of Object.entries(handlers)) {
    source.addEventListener(name, (event) => handle(event.data));
  }
}

/**
 * Whether each event stream is open, by path.
 * @type {Map<string, boolean>}
 */
const liveStreams = new Map();
function showStatus() {
  const allLive = [...liveStreams.values()].every(Boolean);
  ui.status.textContent = !callsReach
    ? "Cannot reach the service"
    : allLive
    ? "Live"
    : "Reconnecting…";
  ui.status.classList.toggle("live", allLive && callsReach);
}

ui.joinForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  ui.joinError.textContent = "";
  const name = ui.name.value;
  const res = await call("/users", { method: "POST", body: name });
  if (typeof res === "string") {
    showError(ui.joinError, res);
    return;
  }
  if (!res.ok) {
    showError(ui.joinError, await refusalOf(res));
    ui.name.select();
    return;
  }
  token = String((await res.json()).token);
  sessionStorage.setItem(TOKEN_KEY, token);
  ui.name.value = "";
  showJoined(true);
  ui.message.focus();
  await refreshUsers();
});

ui.postForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  ui.postError.textContent = "";
  const color = new FormData(ui.postForm).get("color") ?? "black";
  const res = await call("/", {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ text: ui.message.value, color }),
  });
  if (typeof res === "string") {
    showError(ui.postError, res);
  } else if (res.status === 401) {
    signOut("You are no longer signed in; join again.");
  } else if (!res.ok) {
    showError(ui.postError, await refusalOf(res));
  } else {
    ui.message.value = "";
    ui.message.focus();
  }
});

ui.leave.addEventListener("click", async () => {
  const res = await call("/users", {
    method: "DELETE",
    headers: authHeaders(),
  });
  if (typeof res === "string") {
    showError(ui.postError, res);
    return;
  }
  // Gone already (401) is as good as leaving.
  if (res.ok || res.status === 401) signOut("");
  else showError(ui.postError, await refusalOf(res));
});

ui.refreshUsers.addEventListener("click", () => refreshUsers());

ui.quoteForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  ui.quoteError.textContent = "";
  const res = await call("/quote", {
    method: "POST",
    body: ui.quoteText.value,
  });
  if (typeof res === "string") showError(ui.quoteError, res);
  else if (!res.ok) showError(ui.quoteError, await refusalOf(res));
  else ui.quoteText.value = "";
});

follow("/events", {
  message: (data) => showMessage(JSON.parse(data)),
  gap: (data) => {
    const missed = Number(JSON.parse(data).missed);
    notice(`${missed} message${missed === 1 ? "" : "s"} missed while away`);
  },
}, () => ui.messages.replaceChildren());

if (!ui.quotePanel.hidden) {
  follow("/quote/events", {
    quote: (data) => {
      ui.quote.textContent = String(JSON.parse(data));
    },
  }, () => {});
}

// A reload rejoins as the same user while the token still authenticates.
if (token) {
  showJoined(true);
  refreshUsers();
} else {
  ui.name.focus();
}
