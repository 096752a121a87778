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
// A socket that could not open is tried again after this, doubled per
// failure, up to 32 times as long.
const SOCKET_RETRY_MS = 1000;
const SIGNED_OUT = "You are no longer signed in; join again.";

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
  if (!joined) showOnline([]);
}

function signOut(/** @type {string} */ reason) {
  const wasSignedIn = token !== null;
  token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  showJoined(false);
  showError(ui.joinError, reason);
  ui.name.focus();
  // The stream was the user's: follow on as nobody.
  if (wasSignedIn) followMessages();
}

/**
 * Who is online, in the order the panel shows them: as `GET /users/online`
 * last said, then changed by each presence event.
 * @type {string[]}
 */
let online = [];
/**
 * Presence events that came while the list was being fetched: applied
 * again on top of it, as the list may have been taken before them.
 * @type {any[] | null}
 */
let presenceWhileLoading = null;

function showOnline(/** @type {string[]} */ names) {
  online = names;
  ui.users.replaceChildren(
    ...names.map((name) => {
      const item = document.createElement("li");
      item.textContent = name;
      return item;
    }),
  );
}

/** A presence event's change to the list: a name online goes last, one gone or unregistered leaves it. */
function applyPresence(/** @type {any} */ change) {
  const name = String(change?.name ?? "");
  if (change?.online !== true) {
    showOnline(online.filter((other) => other !== name));
  } else if (!online.includes(name)) showOnline([...online, name]);
}

/** A presence event: the list changes, and the user learns if it was them who was unregistered. */
function onPresence(/** @type {any} */ change) {
  if (token && change?.registered === false && change.name === nameOf(token)) {
    signOut("You were unregistered (away too long?); join again.");
    return;
  }
  presenceWhileLoading?.push(change);
  applyPresence(change);
}

/** @type {Promise<void> | null} */
let refreshing = null;
/** Asks who is online, once at a time however many ask. */
function refreshOnline() {
  refreshing ??= loadOnline().finally(() => refreshing = null);
  return refreshing;
}

async function loadOnline() {
  if (!token) return;
  presenceWhileLoading = [];
  const res = await call("/users/online", { headers: authHeaders() });
  // The body too is read before the list is replaced: a presence event
  // that came while it was read is applied again on top of it.
  const names = typeof res !== "string" && res.ok
    ? (await res.json()).online.map(String)
    : null;
  const since = presenceWhileLoading;
  presenceWhileLoading = null;
  if (typeof res === "string") return;
  if (res.status === 401) {
    signOut(SIGNED_OUT);
    return;
  }
  if (names === null) return;
  showOnline(names);
  for (const change of since) applyPresence(change);
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
}

/**
 * The id of the newest message shown, so that a stream opened anew (on
 * joining) resumes after it rather than starting over.
 */
let lastMessageId = "";

/**
 * Where to follow `path` with `scheme` (`http:` for event streams, `ws:`
 * for sockets): `/events` resumes after the newest message shown, so a
 * stream opened anew (on joining, leaving, falling back) repeats nothing.
 * @param {string} path
 * @param {"http:" | "ws:"} scheme
 */
function streamUrl(path, scheme) {
  const url = new URL(path, location.href);
  if (scheme === "ws:") {
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  }
  if (path === "/events" && lastMessageId) {
    url.searchParams.set("lastEventId", lastMessageId);
  }
  return url;
}

/**
 * What each event of a stream does, by event name, given its data parsed.
 * @typedef {Record<string, (data: any) => void>} Handlers
 */

/**
 * Follows an event stream with `EventSource`, anonymously: it reconnects
 * by itself (resuming with Last-Event-ID); when the server refuses it
 * outright, a new one is opened after a pause.
 * @param {string} path
 * @param {Handlers} handlers
 * @returns {() => void} stops following
 */
function follow(path, handlers) {
  let stopped = false;
  /** @type {EventSource} */
  let source;
  const open = () => {
    source = new EventSource(streamUrl(path, "http:"));
    source.onopen = () => {
      liveStreams.set(path, true);
      showStatus();
    };
    source.onerror = () => {
      liveStreams.set(path, false);
      showStatus();
      if (source.readyState === EventSource.CLOSED && !stopped) {
        setTimeout(() => stopped || open(), RECONNECT_MS);
      }
    };
    for (const [name, handle] of Object.entries(handlers)) {
      source.addEventListener(name, (event) => {
        if (event.lastEventId) lastMessageId = event.lastEventId;
        handle(JSON.parse(event.data));
      });
    }
  };
  open();
  return () => {
    stopped = true;
    source.close();
  };
}

/**
 * Follows an event stream as the signed-in user where no WebSocket opens,
 * so that they show as online while the page is open: `EventSource`
 * cannot send the token, so the stream is read with `fetch`. It resumes after the newest message
 * shown, and reconnects after a second when the connection drops; a 401
 * (the user is gone) signs out.
 * @param {string} path
 * @param {Handlers} handlers
 * @param {() => void} onOpen told each time the stream is open
 * @returns {() => void} stops following
 */
function followAsUser(path, handlers, onOpen) {
  const stop = new AbortController();
  /** One event's lines: its name, its data, and its id if any. */
  const dispatch = (/** @type {string} */ block) => {
    let name = "message";
    /** @type {string[]} */
    const data = [];
    for (const line of block.split("\n")) {
      const colon = line.indexOf(":");
      // A comment (the heartbeat), or a line without a field.
      if (colon <= 0) continue;
      const field = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
      else if (field === "id") lastMessageId = value;
    }
    if (data.length > 0) handlers[name]?.(JSON.parse(data.join("\n")));
  };
  const connect = async () => {
    try {
      /** @type {Record<string, string>} */
      const headers = authHeaders();
      if (lastMessageId) headers["last-event-id"] = lastMessageId;
      const res = await fetch(path, { headers, signal: stop.signal });
      if (res.status === 401) {
        signOut(SIGNED_OUT);
        return;
      }
      if (res.ok && res.body) {
        liveStreams.set(path, true);
        showStatus();
        onOpen();
        const reader = res.body.pipeThrough(new TextDecoderStream())
          .getReader();
        let pending = "";
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const blocks = (pending + value).split("\n\n");
          pending = blocks.pop() ?? "";
          blocks.forEach(dispatch);
        }
      }
    } catch {
      // Dropped, or stopped: either way this connection is over.
    }
    if (stop.signal.aborted) return;
    liveStreams.set(path, false);
    showStatus();
    setTimeout(() => stop.signal.aborted || connect(), 1000);
  };
  connect();
  return () => stop.abort();
}

/** Close codes that waiting cannot fix: the token no longer holds (1008), a frame refused (1003). */
const BAD_TOKEN = 1008;
const BAD_FRAME = 1003;

/**
 * Follows an event stream over a WebSocket, as the signed-in user when
 * `credential` is given (the token frame, so they show as online while
 * the page is open). It resumes after the newest message shown and
 * reconnects after a pause that doubles while sockets fail to open; a
 * token no longer valid signs out. Where no socket ever opens (no
 * WebSocket in this browser, or a proxy that does not pass upgrades),
 * `fallback` follows instead.
 * @param {string} path
 * @param {Handlers} handlers
 * @param {string | null} credential
 * @param {() => void} onOpen told each time a socket opens
 * @param {() => () => void} fallback follows another way; returns its stop
 * @returns {() => void} stops following
 */
function followSocket(path, handlers, credential, onOpen, fallback) {
  if (typeof WebSocket !== "function") return fallback();
  /** @type {(() => void) | null} */
  let stopFallback = null;
  let stopped = false;
  let everOpened = false;
  let failures = 0;
  /** @type {WebSocket} */
  let socket;
  const open = () => {
    socket = new WebSocket(streamUrl(path, "ws:"));
    let opened = false;
    socket.onopen = () => {
      opened = everOpened = true;
      if (credential) socket.send(JSON.stringify({ token: credential }));
      liveStreams.set(path, true);
      showStatus();
      onOpen();
    };
    socket.onmessage = (event) => {
      const frame = JSON.parse(String(event.data));
      if (typeof frame?.id === "number") lastMessageId = String(frame.id);
      handlers[String(frame?.event)]?.(frame?.data);
    };
    socket.onclose = (event) => {
      if (stopped) return;
      liveStreams.set(path, false);
      showStatus();
      if (!everOpened) {
        stopFallback = fallback();
        return;
      }
      if (event.code === BAD_TOKEN) {
        signOut(SIGNED_OUT);
        return;
      }
      if (event.code === BAD_FRAME) return;
      failures = opened ? 0 : failures + 1;
      const pause = SOCKET_RETRY_MS * 2 ** Math.min(failures, 5);
      setTimeout(() => stopped || open(), pause);
    };
  };
  open();
  return () => {
    stopped = true;
    socket.close();
    stopFallback?.();
  };
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
  followMessages();
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
    signOut(SIGNED_OUT);
  } else if (!res.ok) {
    showError(ui.postError, await refusalOf(res));
  } else {
    ui.message.value = "";
    ui.message.focus();
  }
});

ui.leave.addEventListener("click", async () => {
  // The user's own stream would hear them leave: it stops first.
  stopMessages?.();
  stopMessages = null;
  const res = await call("/users", {
    method: "DELETE",
    headers: authHeaders(),
  });
  if (typeof res === "string") {
    showError(ui.postError, res);
    followMessages();
    return;
  }
  // Gone already (401) is as good as leaving.
  if (res.ok || res.status === 401) signOut("");
  else {
    showError(ui.postError, await refusalOf(res));
    followMessages();
  }
});

ui.refreshUsers.addEventListener("click", () => refreshOnline());

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

/** @type {Handlers} */
const messageHandlers = {
  message: showMessage,
  gap: (data) => {
    const missed = Number(data?.missed);
    notice(`${missed} message${missed === 1 ? "" : "s"} missed while away`);
  },
  presence: onPresence,
};

/** @type {(() => void) | null} */
let stopMessages = null;
/**
 * Follows the messages as the signed-in user (online while the page is
 * open, and who is online is refreshed whenever the stream opens), or as
 * nobody; called again when the user joins or leaves.
 */
function followMessages() {
  stopMessages?.();
  const credential = token;
  stopMessages = followSocket(
    "/events",
    messageHandlers,
    credential,
    credential ? refreshOnline : () => {},
    () =>
      credential
        ? followAsUser("/events", messageHandlers, refreshOnline)
        : follow("/events", messageHandlers),
  );
}

if (!ui.quotePanel.hidden) {
  /** @type {Handlers} */
  const quoteHandlers = {
    quote: (data) => {
      ui.quote.textContent = String(data);
    },
  };
  followSocket(
    "/quote/events",
    quoteHandlers,
    null,
    () => {},
    () => follow("/quote/events", quoteHandlers),
  );
}

// A reload rejoins as the same user while the token still authenticates.
if (token) {
  showJoined(true);
} else {
  ui.name.focus();
}
followMessages();
