/**
 * What a line typed in the terminal chat does, and how presence changes are told.
 * @module
 */

import type { MessagingClient, PresenceChange } from "../client/client.ts";
import { printable, type Terminal } from "./terminal.ts";

/** What the commands act on. */
export interface Chat {
  readonly client: MessagingClient;
  readonly term: Terminal;
  color: "red" | "black";
  /** Where `/more` goes on once it has shown a page; `null`: nothing older. */
  olderBefore?: number | null;
  /** The oldest message on the screen, below which the first `/more` starts. */
  oldestShown?(): number | undefined;
}

type Command = (chat: Chat) => Promise<void> | void;

const HELP =
  "/red, /black: the color you send in; /users: who is online; /more: older messages; /quit: leave";

/** What fits a small terminal. */
const MORE_PAGE = 10;

const NO_OLDER = "No older messages.";

async function more(chat: Chat): Promise<void> {
  if (chat.olderBefore === null) return chat.term.notice(NO_OLDER);
  const page = await chat.client.olderMessages({
    before: chat.olderBefore ?? chat.oldestShown?.(),
    limit: MORE_PAGE,
  });
  const count = page.messages.length;
  // Nothing yet below what is shown: later messages may put some there.
  if (count === 0) return chat.term.notice(NO_OLDER);
  chat.olderBefore = page.next;
  chat.term.showOlder(page.messages.map((m) => m.message).toReversed());
  chat.term.notice(
    `${count} older message${count === 1 ? "" : "s"} shown; ` +
      (page.next === null ? "none before them." : "/more for more."),
  );
}

async function whoIsHere(client: MessagingClient): Promise<string> {
  const [online, users] = await Promise.all([client.online(), client.users()]);
  const here = new Set(online);
  const away = users.filter((name) => !here.has(name));
  const list = (names: string[]) => names.map(printable).join(", ");
  return `Online: ${list(online) || "nobody"}` +
    (away.length > 0 ? `; also registered: ${list(away)}` : "");
}

const sendIn = (color: "red" | "black"): Command => (chat) => {
  chat.color = color;
  chat.term.notice(`Now sending in ${color}.`);
};

// A Map, so a message such as "constructor" is never taken for a command.
const commands = new Map<string, Command>([
  ["/red", sendIn("red")],
  ["/black", sendIn("black")],
  ["/users", async (chat) => chat.term.notice(await whoIsHere(chat.client))],
  ["/more", more],
  ["/help", (chat) => chat.term.notice(HELP)],
]);

const send = (chat: Chat, text: string) =>
  chat.client.post(text, { color: chat.color });

/** What `line` does when run: `//text` sends `/text`, another `/word` is a command. */
export function actionOf(line: string, chat: Chat): () => Promise<void> | void {
  const command = line.trim();
  if (command.startsWith("//")) return () => send(chat, line.replace("/", ""));
  if (!command.startsWith("/")) return () => send(chat, line);
  const known = commands.get(command);
  if (known !== undefined) return () => known(chat);
  const unknown = `Unknown command ${printable(command)}: /help lists them; ` +
    "//text sends /text.";
  return () => chat.term.notice(unknown);
}

/** A line telling a change of presence; none for this chat's own coming and going. */
export function presenceNotice(
  change: PresenceChange,
  me: string | undefined,
): string | undefined {
  const who = printable(change.name);
  if ("registered" in change) {
    return change.name === me
      ? `You (${who}) were unregistered.`
      : `${who} left.`;
  }
  if (change.name === me) return undefined;
  return change.online ? `${who} is online.` : `${who} went offline.`;
}
