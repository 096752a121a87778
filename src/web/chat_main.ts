/// <reference lib="dom" />
/**
 * The chat page's script: it only draws what the client library brings.
 * Bundled into `chat.bundle.js` by `deno task bundle:page`.
 * @module
 */

import {
  type FollowOptions,
  type Message,
  MessagingClient,
  type PresenceChange,
  QuoteClient,
  ServiceError,
} from "../client/client.ts";
import { loadOlderOnScroll } from "./older_messages.ts";
import { shareAmongTabs, type SharedTabs } from "./shared_tabs.ts";

// In localStorage: a reopened tab, or another tab of the page, is the same user.
const TOKEN_KEY = "lms-token";
const TITLE = document.title;
// The log is bounded: a tab left open for days keeps the newest entries.
const MAX_ENTRIES = 500;
// After a refused stream (429), unless the service says how long to wait.
const REFUSED_RETRY_MS = 5000;
const SLOW_CALL_MS = 5000;
const SIGNED_OUT = "You are no longer signed in; join again.";
const UNREACHABLE = "The service cannot be reached; try again in a moment.";
/** Told by a tab whose user left in another tab of the browser, whichever way it hears first. */
const SIGNED_OUT_ELSEWHERE = "Signed out in another tab.";

function element<T extends HTMLElement>(id: string, type: new () => T): T {
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
  usersStale: element("users-stale", HTMLElement),
  refreshUsers: element("refresh-users", HTMLButtonElement),
  onlineCount: element("online-count", HTMLAnchorElement),
};

/** Everything other people wrote goes in as text, never as markup. */
function textElement(tag: "li" | "span", className: string, text: string) {
  const made = document.createElement(tag);
  if (className !== "") made.className = className;
  made.textContent = text;
  return made;
}

/** One line per refusal, so two (a quote can fail both checks) never read as one. */
function showError(alert: HTMLElement, lines: string | string[]) {
  const shown = [lines].flat().filter((line) => line !== "");
  alert.replaceChildren(
    ...shown.map((line) => textElement("span", "line", line)),
  );
}

// Live only while calls reach the service too: an open stream is not a working Send.
let callsReach = true;
const liveStreams = new Map<string, boolean>();

function showStatus() {
  const allLive = [...liveStreams.values()].every(Boolean);
  const live = allLive && callsReach;
  ui.status.textContent = !callsReach
    ? "Cannot reach the service"
    : allLive
    ? "Live"
    : "Reconnecting…";
  ui.status.classList.toggle("live", live);
  // Who is online is news only while it can arrive (the dots follow in CSS).
  ui.usersStale.hidden = live;
}

function setLive(path: string, live: boolean) {
  liveStreams.set(path, live);
  showStatus();
  tabs.tell({ kind: "live", path, live });
}

/** What the leading tab's streams bring, told to the page's other tabs. */
type PageEvent =
  | { kind: "message"; id: number; message: Message }
  | { kind: "gap"; missed: number }
  | { kind: "presence"; change: PresenceChange }
  | { kind: "quote"; quote: string }
  | { kind: "live"; path: string; live: boolean }
  | { kind: "over"; name?: string };

/** A failed call: the lines to show, and the status if the service answered. */
class Failure {
  constructor(readonly lines: string[], readonly status?: number) {}
}

/** Anything the service answered, an event on a stream too, says it can be reached. */
function reached() {
  // Called for every event: the status changes only when this is news.
  if (callsReach) return;
  callsReach = true;
  showStatus();
}

// The browser knows first: offline cannot reach; online, ask whether it can.
addEventListener("offline", () => {
  callsReach = false;
  showStatus();
});
addEventListener(
  "online",
  () => void call(() => chat.olderMessages({ limit: 1 })),
);

const watchedFetch: typeof fetch = async (input, init) => {
  const slow = setTimeout(() => {
    callsReach = false;
    showStatus();
  }, SLOW_CALL_MS);
  try {
    const res = await fetch(input, init);
    callsReach = true;
    // A call's refusal stays until a call is answered.
    for (const alert of [ui.postError, ui.joinError, ui.quoteError]) {
      if (alert.textContent === UNREACHABLE) alert.textContent = "";
    }
    return res;
  } catch (error) {
    // fetch's TypeError: no answer at all (an abort is no news).
    if (error instanceof TypeError) callsReach = false;
    throw error;
  } finally {
    clearTimeout(slow);
    showStatus();
  }
};

/** The stored token; anything else stored (another page's) is dropped. */
function storedToken(): string | undefined {
  const held = localStorage.getItem(TOKEN_KEY);
  if (held !== null && isToken(held)) return held;
  localStorage.removeItem(TOKEN_KEY);
  return undefined;
}

const isToken = (text: string) => /^[^-]+-[0-9a-f]{40}$/.test(text);

const origin = new URL("/", location.href);
const chat = new MessagingClient(origin, {
  fetch: watchedFetch,
  token: storedToken(),
});
const quotes = new QuoteClient(origin, { fetch: watchedFetch });

async function call<T>(action: () => Promise<T>): Promise<T | Failure> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof TypeError) return new Failure([UNREACHABLE]);
    if (!(error instanceof ServiceError)) throw error;
    const { errors, message, status } = error;
    const lines = errors.map((e) => e.description);
    return new Failure(lines.length > 0 ? lines : [message], status);
  }
}

function showJoined(joined: boolean) {
  ui.joinForm.hidden = joined;
  ui.postForm.hidden = !joined;
  ui.usersPanel.hidden = !joined;
  if (joined) ui.me.textContent = chat.name ?? "";
  else showOnline([]);
}

function signOut(reason: string) {
  chat.token = undefined;
  localStorage.removeItem(TOKEN_KEY);
  showJoined(false);
  showError(ui.joinError, reason);
  ui.name.focus();
  // The stream was the user's: follow on as nobody.
  followMessages();
}

let rejoining: Promise<boolean> | undefined;
// A 401: take the name again, once however many calls found out; false if signed out.
function rejoin(refused: string | undefined): Promise<boolean> {
  // A refusal of an older token: joined again since.
  if (refused === undefined || refused !== chat.token) {
    return Promise.resolve(chat.token !== undefined);
  }
  return rejoining ??= joinAgain(refused).finally(() => rejoining = undefined);
}

// One tab at a time: a second tab's join would be refused the name, signing all out.
function joinAgain(refused: string): Promise<boolean> {
  const locks = (navigator as { locks?: LockManager }).locks;
  return locks === undefined
    ? joinAgainNow(refused)
    : locks.request("lms-chat-rejoin", () => joinAgainNow(refused));
}

async function joinAgainNow(refused: string): Promise<boolean> {
  const name = chat.name;
  if (name === undefined) return false;
  const held = localStorage.getItem(TOKEN_KEY);
  // Another tab left (nothing stored) or joined again first (another token).
  if (held === null) return signOut(SIGNED_OUT), false;
  if (held !== refused) return adopt(held), true;
  const joined = await call(() => chat.register(name));
  if (!(joined instanceof Failure)) {
    localStorage.setItem(TOKEN_KEY, joined);
    // Otherwise the leading tab hears of the new token and does it.
    if (tabs.leading) leadStartingOver(name);
    return true;
  }
  // Not answered: the token is kept and tried again later.
  if (joined.status === undefined) return true;
  const now = localStorage.getItem(TOKEN_KEY);
  if (now !== null && now !== held) return adopt(now), true;
  signOut([SIGNED_OUT, ...joined.lines].join(" "));
  return false;
}

let online: string[] = [];
// Presence events heard while the list loads, applied again on top of it.
let presenceWhileLoading: PresenceChange[] | null = null;

function showOnline(names: string[]) {
  online = names;
  // In the bar, so a phone sees it without scrolling.
  ui.onlineCount.textContent = `${names.length} online`;
  ui.onlineCount.hidden = chat.token === undefined;
  ui.users.replaceChildren(...names.map((name) => textElement("li", "", name)));
}

function applyPresence(change: PresenceChange) {
  if (!("online" in change && change.online)) {
    showOnline(online.filter((other) => other !== change.name));
  } else if (!online.includes(change.name)) {
    showOnline([...online, change.name]);
  }
}

function onPresence(change: PresenceChange) {
  reached();
  tabs.tell({ kind: "presence", change });
  if ("registered" in change && change.name === chat.name) {
    // Nothing stored: the user left, here or in another tab.
    const left = localStorage.getItem(TOKEN_KEY) === null;
    signOut(
      !left
        ? "You were unregistered (away too long?); join again."
        : leaving
        ? ""
        : SIGNED_OUT_ELSEWHERE,
    );
    return;
  }
  presenceWhileLoading?.push(change);
  applyPresence(change);
  // In the terminal chat's words; the user's own goes untold.
  if (change.name === chat.name) return;
  if ("registered" in change) notice(`${change.name} left.`);
  else if (change.online) notice(`${change.name} is online.`);
  else notice(`${change.name} went offline.`);
}

let refreshing: Promise<void> | null = null;
// Once at a time however many ask.
function refreshOnline() {
  return refreshing ??= loadOnline().finally(() => refreshing = null);
}

async function loadOnline() {
  if (chat.token === undefined) return;
  presenceWhileLoading = [];
  const sent = chat.token;
  const names = await call(() => chat.online());
  const since = presenceWhileLoading;
  presenceWhileLoading = null;
  if (names instanceof Failure) {
    if (names.status === 401) rejoin(sent);
    return;
  }
  showOnline(names);
  for (const change of since) applyPresence(change);
}

/** Follows the newest only when the reader was already there. */
function appendEntry(entry: HTMLElement) {
  const list = ui.messages;
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.append(entry);
  while (list.childElementCount > MAX_ENTRIES) {
    list.firstElementChild?.remove();
  }
  if (atBottom) list.scrollTop = list.scrollHeight;
}

const notice = (text: string) => appendEntry(textElement("li", "notice", text));

function messageEntry(message: Message) {
  const entry = textElement("li", "message", "");
  if (message.color === "red") entry.classList.add("red");
  if (message.user === chat.name) entry.classList.add("mine");
  entry.append(
    textElement("span", "author", String(message.user)),
    textElement("span", "text", String(message.text)),
  );
  return entry;
}

function showMessage(id: number, message: Message) {
  lastMessageId = id;
  firstMessageId ??= id;
  appendEntry(messageEntry(message));
  older.fill();
  if (message.user !== chat.name) countUnread();
  tabs.tell({ kind: "message", id, message });
}

function showGap(missed: number) {
  notice(`${missed} message${missed === 1 ? "" : "s"} missed while away`);
  tabs.tell({ kind: "gap", missed });
}

let unread = 0;
function countUnread() {
  if (!document.hidden) return;
  unread++;
  document.title = `(${unread}) ${TITLE}`;
}

document.addEventListener("visibilitychange", () => {
  if (document.hidden) return;
  unread = 0;
  document.title = TITLE;
});

// Another tab of the page joined, joined again or left: this one follows.
addEventListener("storage", (event) => {
  if (event.key !== TOKEN_KEY || event.newValue === (chat.token ?? null)) {
    return;
  }
  if (event.newValue === null || !isToken(event.newValue)) {
    return signOut(SIGNED_OUT_ELSEWHERE);
  }
  adopt(event.newValue);
});

/** Takes the token another tab stored. */
function adopt(token: string) {
  if (token === chat.token) return;
  const [before, held] = [chat.name, chat.token];
  chat.token = token;
  showJoined(true);
  // The same name with a new token: the service had forgotten it.
  if (tabs.leading && held !== undefined && chat.name === before) {
    leadStartingOver(before!);
  } else followMessages();
}

// The service likely restarted, numbering from 1 again: start over, not mix two lives' ids.
function startOver(name?: string) {
  ui.messages.replaceChildren();
  shownUpTo = undefined;
  lastMessageId = firstMessageId = undefined;
  older.restart();
  notice(
    name === undefined
      ? "The service restarted: the conversation starts over."
      : `The service had forgotten you (restarted?): joined again as ${name}.`,
  );
  tabs.tell({ kind: "over", name });
}

function leadStartingOver(name: string) {
  startOver(name);
  followMessages();
}

/** The library reconnects by itself; a refusal ends it: a 401 rejoins, others retry later. */
async function keepFollowing(
  path: string,
  read: (options: FollowOptions) => Promise<void>,
  signal?: AbortSignal,
) {
  while (!signal?.aborted) {
    const sent = chat.token;
    try {
      await read({
        signal,
        onOpen: () => (reached(), setLive(path, true)),
        onReconnect: () => setLive(path, false),
      });
    } catch (error) {
      if (signal?.aborted) return;
      if (!(error instanceof ServiceError)) throw error;
      setLive(path, false);
      if (error.status === 401) {
        if (await rejoin(sent)) continue;
        return;
      }
      const seconds = error.retryAfterSeconds;
      const ms = seconds === undefined ? REFUSED_RETRY_MS : seconds * 1000;
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
  }
}

// A stream opened anew resumes after the last; scrolling up loads before the first.
let lastMessageId: number | undefined;
let firstMessageId: number | undefined;
let following: { stop: AbortController; done: Promise<void> } | undefined;

/** Follows as the signed-in user, or nobody; again on joining or leaving. */
function followMessages() {
  if (!tabs.leading) return;
  const previous = following;
  previous?.stop.abort();
  const stop = new AbortController();
  // The old socket is closed first: a client's sockets are counted.
  const done = (async () => {
    await previous?.done;
    await keepFollowing("/events", readMessages, stop.signal);
  })();
  following = { stop, done };
}

async function readMessages(options: FollowOptions) {
  const events = chat.events({
    ...options,
    lastEventId: lastMessageId,
    onPresence,
    onOpen() {
      options.onOpen?.();
      refreshOnline();
    },
  });
  for await (const event of events) {
    reached();
    if (event.type === "gap") showGap(event.missed);
    else {
      // An id not above the last: the store restarted, whoever is signed in.
      if (event.id <= (lastMessageId ?? 0)) startOver();
      showMessage(event.id, event.message);
    }
  }
}

ui.joinForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  ui.joinError.textContent = "";
  const joined = await call(() => chat.register(ui.name.value));
  if (joined instanceof Failure) {
    showError(ui.joinError, joined.lines);
    if (joined.status !== undefined) ui.name.select();
    return;
  }
  localStorage.setItem(TOKEN_KEY, joined);
  ui.name.value = "";
  showJoined(true);
  ui.message.focus();
  followMessages();
});

// Send pressed while a post is on its way sends nothing.
let sending: Promise<void> | undefined;

async function send(retry = true) {
  const red = new FormData(ui.postForm).get("color") === "red";
  const color = red ? "red" : "black";
  const token = chat.token;
  const sent = await call(() => chat.post(ui.message.value, { color }));
  if (!(sent instanceof Failure)) {
    ui.message.value = "";
    ui.message.focus();
  } else if (sent.status === 401) {
    if (retry && await rejoin(token)) await send(false);
  } else showError(ui.postError, sent.lines);
}

ui.postForm.addEventListener("submit", (event) => {
  event.preventDefault();
  if (sending) return;
  ui.postError.textContent = "";
  sending = send().finally(() => sending = undefined);
});

/** This tab's Leave is on its way: the leading tab may tell it the user left. */
let leaving = false;

ui.leave.addEventListener("click", async () => {
  // The user's stream would hear them leave: it stops first, here and (as
  // nothing is stored) in the leading tab.
  const token = chat.token;
  localStorage.removeItem(TOKEN_KEY);
  following?.stop.abort();
  leaving = true;
  const left = await call(() => chat.unregister()).finally(() =>
    leaving = false
  );
  // Gone already (401) is as good as leaving.
  if (!(left instanceof Failure) || left.status === 401) signOut("");
  else {
    if (token !== undefined) localStorage.setItem(TOKEN_KEY, token);
    showError(ui.postError, left.lines);
    followMessages();
  }
});

ui.refreshUsers.addEventListener("click", () => refreshOnline());

const older = loadOlderOnScroll({
  list: ui.messages,
  page: (before) => chat.olderMessages({ before }),
  oldestShown: () => firstMessageId,
  render: ({ message }) => messageEntry(message),
});

ui.quoteForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  ui.quoteError.textContent = "";
  const set = await call(() => quotes.set(ui.quoteText.value));
  if (set instanceof Failure) showError(ui.quoteError, set.lines);
  else ui.quoteText.value = "";
});

function showQuote(quote: string) {
  ui.quote.textContent = quote;
  tabs.tell({ kind: "quote", quote });
}

function lead() {
  followMessages();
  if (ui.quotePanel.hidden) return;
  keepFollowing("/quote/events", async (options) => {
    for await (const quote of quotes.events(options)) {
      reached();
      showQuote(quote);
    }
  });
}

/** Another tab leads: this one shows what is there now, then what it is told. */
async function followTheLeader() {
  const [newest, quote] = await Promise.all([
    call(() => chat.olderMessages({ limit: 5 })),
    ui.quotePanel.hidden ? undefined : call(() => quotes.get()),
  ]);
  if (!(newest instanceof Failure)) {
    for (const { id, message } of newest.messages.toReversed()) {
      showMessage(id, message);
    }
  }
  if (typeof quote === "string") ui.quote.textContent = quote;
  shownUpTo = lastMessageId;
  refreshOnline();
}

function hear(event: PageEvent) {
  // Any script of the origin may post to the channel: only well-formed news.
  if (typeof event !== "object" || event === null) return;
  // News from the leader's streams: the service answered it.
  if (event.kind !== "live") reached();
  if (event.kind === "message") {
    const { id, message } = event;
    const words = message as Partial<Message> | null;
    if (!Number.isSafeInteger(id) || typeof words?.text !== "string") return;
    if (typeof words.user !== "string") return;
    // The leader's catch-up may repeat what this tab loaded itself.
    if (shownUpTo !== undefined && id <= shownUpTo) return;
    shownUpTo = undefined;
    showMessage(id, message);
  } else if (event.kind === "gap") showGap(event.missed);
  else if (event.kind === "presence") {
    const { change } = event;
    if (typeof change === "object" && change !== null) onPresence(change);
  } else if (event.kind === "quote") showQuote(event.quote);
  else if (event.kind === "over") startOver(event.name);
  else if (event.kind === "live") {
    setLive(event.path, event.live);
    if (event.path === "/events" && event.live) refreshOnline();
  }
}
// The newest id this tab loaded itself, until the leader tells of a newer (docs/architecture.md).
let shownUpTo: number | undefined;
// What a follower is told waits until it has shown what it loaded.
let loaded: Promise<void> = Promise.resolve();

// A reload rejoins as the same user while the token still authenticates.
if (chat.token !== undefined) showJoined(true);
else ui.name.focus();
const tabs: SharedTabs<PageEvent> = shareAmongTabs<PageEvent>({
  name: "lms-chat",
  lead,
  // A load that failed is logged once; what the tab is told is shown anyway.
  follow: () => void (loaded = followTheLeader().catch(console.error)),
  hear: (event) => void loaded.then(() => hear(event)),
  // A tab that starts learns whether the streams are live.
  greet: () => {
    for (const [path, live] of liveStreams) setLive(path, live);
  },
});
