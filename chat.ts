/**
 * `deno task chat`: a terminal chat over the messaging service.
 *
 * In a terminal it draws the 5 newest messages above the line being typed,
 * red ones in red, and redraws them as they arrive on the service's event
 * stream (a WebSocket authenticated as the chat's user, so it is online
 * while the chat runs); over a pipe it reads one line per message or command and writes
 * each new message as one line, for scripts. Commands: `/red`, `/black`, `/users`, `/help`, `/quit` (also
 * Ctrl-C and Ctrl-D), which unregisters before it exits. Who comes online,
 * goes offline or leaves is told as it happens.
 * @module
 */

import { parseArgs } from "node:util";
import stringWidth from "string-width";
import {
  type Message,
  MessagingClient,
  type PresenceChange,
  ServiceError,
} from "./src/client/client.ts";

const USAGE = `Usage: deno task chat [--url=URL] [--name=NAME]

  --url=URL    the messaging service (default: http://localhost:8000/)
  --name=NAME  the name to join with; asked for when absent or refused
  --help       show this help and exit

In the chat: /red and /black pick the color of what you send, /users lists
who is online (and who else is registered), /quit (or Ctrl-C, Ctrl-D)
leaves and unregisters. Others coming online, going offline or leaving are
told as it happens.

The exit status is 1 when a line read was not sent, or when input over a
pipe ended before the chat joined (the service unreachable, or no name
accepted), so that a script piping messages in learns they did not go.`;

/** How many notices the terminal shows at once, newest last. */
const NOTICES_SHOWN = 3;

/** The signals that end the chat as /quit does. */
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** How often joining is tried again while the service is unreachable. */
const RETRY_MS = 1000;

const ESC = "\x1b";
const RED = `${ESC}[31m`;
const RESET = `${ESC}[0m`;

/** Text from other people made safe to print: no control characters, so no escape sequences. */
function printable(text: unknown): string {
  // deno-lint-ignore no-control-regex -- control characters are what it removes
  return String(text).replace(/[\x00-\x1f\x7f-\x9f]/g, "\uFFFD");
}

/** Where keystrokes or lines come from, and where the chat is drawn. */
interface Terminal {
  /** The next line typed, or `null` when the user leaves (end of input, Ctrl-C, Ctrl-D). */
  readLine(): Promise<string | null>;
  /** Shows `message`, just stored, among the newest ones (`newest`, newest first). */
  showMessage(message: Message, newest: Message[]): void;
  /** Shows a notice: a command's answer, an error, the service's state. */
  notice(text: string): void;
  /** Sets what precedes the line being typed. */
  setPrompt(prompt: string): void;
  /** Gives the terminal back as it was. */
  restore(): void;
}

const encoder = new TextEncoder();
const write = (text: string) => Deno.stdout.writeSync(encoder.encode(text));

/** Reads lines from a pipe and writes each new message once, as a line. */
function pipeTerminal(): Terminal {
  const lines = Deno.stdin.readable
    .pipeThrough(new TextDecoderStream())
    .getReader();
  let pending = "";
  return {
    async readLine() {
      while (!pending.includes("\n")) {
        const { done, value } = await lines.read();
        if (done) {
          const last = pending;
          pending = "";
          return last === "" ? null : last;
        }
        pending += value;
      }
      const at = pending.indexOf("\n");
      const line = pending.slice(0, at).replace(/\r$/, "");
      pending = pending.slice(at + 1);
      return line;
    },
    showMessage(m) {
      const color = m.color === "red" ? " (red)" : "";
      write(`${printable(m.user)}${color}: ${printable(m.text)}\n`);
    },
    notice(text) {
      write(`* ${text}\n`);
    },
    setPrompt(prompt) {
      if (prompt.startsWith("Your name")) write(`${prompt}\n`);
    },
    restore() {},
  };
}

/** A full-screen chat in a real terminal, typed in raw mode. */
// deno-lint-ignore lms/max-function-lines -- too long; split by the 0.3.0 redesign
function ttyTerminal(title: () => string): Terminal {
  Deno.stdin.setRaw(true);
  // The alternate screen keeps the user's scrollback as it was.
  write(`${ESC}[?1049h`);
  const reader = Deno.stdin.readable.getReader();
  const decoder = new TextDecoder();
  let typed = "";
  let prompt = "> ";
  let messages: Message[] = [];
  // The newest notices, so that one (/help) does not hide another (/users).
  let notices: string[] = [];
  let keys: string[] = [];

  const graphemes = new Intl.Segmenter();
  const draw = () => {
    const { columns, rows } = Deno.consoleSize();
    // One row per line, so that a long message or a narrow terminal never
    // pushes the title off the screen.
    const fit = (line: string) => {
      if (stringWidth(line) < columns) return line;
      // Cut by what the terminal shows: whole clusters, by their columns.
      let cut = "";
      for (const { segment } of graphemes.segment(line)) {
        if (stringWidth(cut + segment) > columns - 2) break;
        cut += segment;
      }
      return `${cut}…`;
    };
    const shown = messages.toReversed().map((m) => {
      const line = fit(`${printable(m.user)}: ${printable(m.text)}`);
      return m.color === "red" ? `${RED}${line}${RESET}` : line;
    });
    const noticeLines = notices.map(fit);
    // A short terminal keeps the title and the prompt, then the newest
    // notices and messages, dropping the spacing first.
    let spacing = 2;
    while (2 + spacing + shown.length + noticeLines.length > rows) {
      if (spacing > 0) spacing--;
      else if (shown.length > 1) shown.shift();
      else if (noticeLines.length > 0) noticeLines.shift();
      else break;
    }
    const lines = [
      fit(title()),
      ...(spacing > 0 ? [""] : []),
      ...shown,
      ...(spacing > 1 ? [""] : []),
      ...noticeLines,
    ];
    write(
      `${ESC}[H${ESC}[2J${lines.join("\r\n")}\r\n${prompt}${typed}`,
    );
  };
  draw();
  Deno.addSignalListener("SIGWINCH", draw);
  const clearLine = () => {
    typed = "";
    draw();
  };

  return {
    async readLine() {
      for (;;) {
        if (keys.length === 0) {
          const { done, value } = await reader.read();
          if (done) return null;
          // Drop escape sequences (arrows, function keys): no line editing
          // beyond backspace.
          keys = [
            ...decoder.decode(value, { stream: true })
              // deno-lint-ignore no-control-regex -- escape sequences are what it drops
              .replace(/\x1b\[[0-9;?]*[ -\/]*[@-~]|\x1bO.|\x1b/g, ""),
          ];
        }
        const key = keys.shift()!;
        if (key === "\x03" || key === "\x04") return null;
        if (key === "\r" || key === "\n") {
          const line = typed;
          clearLine();
          return line;
        }
        if (key === "\x7f" || key === "\b") {
          // One user-perceived character (👍🏽, é as e + accent), and a
          // redraw, so wide characters leave no stale cells.
          const clusters = [...graphemes.segment(typed)];
          typed = clusters.slice(0, -1).map((c) => c.segment).join("");
          draw();
          continue;
        }
        if (key === "\x15") {
          // Ctrl-U: forget the line typed so far.
          clearLine();
          continue;
        }
        if (key < " ") continue;
        typed += key;
        write(key);
      }
    },
    showMessage(_, newest) {
      messages = newest;
      draw();
    },
    notice(text) {
      notices = [...notices, text].slice(-NOTICES_SHOWN);
      draw();
    },
    setPrompt(next) {
      prompt = next;
      draw();
    },
    restore() {
      Deno.removeSignalListener("SIGWINCH", draw);
      write(`${ESC}[?1049l`);
      try {
        Deno.stdin.setRaw(false);
      } catch {
        // Not a terminal any more: nothing to give back.
      }
    },
  };
}

/**
 * What `/users` says: who is online (an event stream open as them, this
 * chat's own included), then who else is registered.
 */
async function whoIsHere(client: MessagingClient): Promise<string> {
  const [online, users] = await Promise.all([client.online(), client.users()]);
  const here = new Set(online);
  const away = users.filter((name) => !here.has(name));
  const list = (names: string[]) => names.map(printable).join(", ");
  return `Online: ${list(online) || "nobody"}` +
    (away.length > 0 ? `; also registered: ${list(away)}` : "");
}

/** A line telling a change of presence, or `undefined` for one not worth telling (this chat's own coming and going). */
function presenceNotice(
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

/** `fetch` fails with a TypeError when the service cannot be reached at all. */
const unreachable = (error: unknown) => error instanceof TypeError;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `1 line` or `2 lines`. */
const lines = (count: number) => `${count} line${count === 1 ? "" : "s"}`;

/**
 * Runs the chat until the user leaves; returns the exit code: 1 when a line
 * read was not sent, or input over a pipe ended before joining, so a script
 * that pipes messages in learns that they did not go.
 */
// deno-lint-ignore lms/max-function-lines -- too long; split by the 0.3.0 redesign
export async function chat(
  url: string,
  name: string | undefined,
): Promise<number> {
  const client = new MessagingClient(url);
  let color: "red" | "black" = "black";
  const tty = Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
  const term = tty
    ? ttyTerminal(() =>
      `Chat at ${url}  ${client.name ? `as ${client.name}` : ""}  ` +
      `sending in ${color}  (/red /black /users /quit)`
    )
    : pipeTerminal();
  let down = false;
  const reachable = (ok: boolean) => {
    if (ok && down) term.notice("The service is back.");
    if (!ok && !down) {
      term.notice(
        `The service at ${url} is unreachable; retrying every second.`,
      );
    }
    down = !ok;
  };

  // Signals end the chat at any point, joined or not. In raw mode Ctrl-C
  // arrives as a key; SIGHUP is the terminal going away.
  const quit = Promise.withResolvers<null>();
  let signalled = false;
  const onSignal = () => {
    signalled = true;
    quit.resolve(null);
  };
  for (const signal of SIGNALS) Deno.addSignalListener(signal, onSignal);
  const stopListening = () => {
    for (const signal of SIGNALS) {
      Deno.removeSignalListener(signal, onSignal);
    }
  };
  // One read outstanding at a time, so a read that lost a race to a timer
  // still delivers its line to the next caller.
  let reading: Promise<string | null> | undefined;
  const nextLine = () => {
    reading ??= term.readLine().finally(() => reading = undefined);
    return Promise.race([reading, quit.promise]);
  };
  const leaving = (line: string | null) =>
    line === null || line.trim() === "/quit";
  const leaveUnjoined = (code: number) => {
    stopListening();
    term.restore();
    return code;
  };
  const typedEarly: string[] = [];
  // Leaving before joining fails when lines read were never sent, or when a
  // script's input ran out first: either way nothing it asked for was done.
  const leaveBeforeJoining = (line: string | null) => {
    const inputEnded = line === null && !signalled && !tty;
    if (typedEarly.length === 0 && !inputEnded) return leaveUnjoined(0);
    const why = down
      ? `the service at ${url} could not be reached`
      : "the input ended before a name was accepted";
    const read = typedEarly.length > 0
      ? ` (${lines(typedEarly.length)} read)`
      : "";
    const code = leaveUnjoined(1);
    console.error(`error: ${why}; nothing was sent${read}.`);
    return code;
  };

  // Ask until a name registers. A refused name is asked again; an unreachable
  // service is retried with the same name, and meanwhile the user may still
  // leave (a signal, the end of input, /quit). Lines typed meanwhile are
  // sent once joined.
  let candidate = name;
  while (client.token === undefined) {
    if (candidate === undefined) {
      term.setPrompt("Your name: ");
      const line = await nextLine();
      if (leaving(line)) return leaveBeforeJoining(line);
      candidate = line!;
    }
    try {
      await client.register(candidate);
      reachable(true);
    } catch (error) {
      if (unreachable(error)) {
        reachable(false);
        const line = await Promise.race([
          sleep(RETRY_MS).then(() => undefined),
          nextLine(),
        ]);
        if (line !== undefined && leaving(line)) {
          return leaveBeforeJoining(line);
        }
        if (line !== undefined) typedEarly.push(line!);
        continue;
      }
      if (!(error instanceof ServiceError)) throw error;
      if (error.status === 404) {
        term.notice(`${url} serves no messaging service (POST /users is 404).`);
        return leaveUnjoined(1);
      }
      term.notice(`"${printable(candidate)}" cannot join: ${error.message}`);
      candidate = undefined;
    }
  }
  term.setPrompt("> ");
  term.notice(`Joined as ${client.name}. Type a message, or /help.`);

  /**
   * After a restart (or `--forget-users-after`) the service has forgotten
   * the name: take it again if it is free. Once at a time: a send and the
   * stream may both find out.
   */
  let rejoining: Promise<boolean> | undefined;
  const rejoin = () =>
    rejoining ??= joinAgain().finally(() => rejoining = undefined);
  const joinAgain = async (): Promise<boolean> => {
    const who = client.name!;
    try {
      await client.register(who);
      term.notice(
        `The service had forgotten you (restarted?): joined again as ${
          printable(who)
        }.`,
      );
      return true;
    } catch (error) {
      if (!(error instanceof ServiceError) && !unreachable(error)) throw error;
      term.notice(
        `The service no longer knows you and "${
          printable(who)
        }" cannot join again: ${
          (error as Error).message
        }. /quit and join with another name.`,
      );
      return false;
    }
  };

  // Messages arrive on the event stream as they are stored; the library
  // follows it over a WebSocket and reconnects by itself after the last id
  // seen, so nothing retained is missed.
  const newest: Message[] = [];
  const following = new AbortController();
  let streamLost = false;
  const follow = (async () => {
    // The stream is opened as this chat's user: a 401 (the socket closed
    // with 1008) says the service forgot it, and once joined again it follows as the new one.
    for (let joins = 0; joins < 100; joins++) {
      try {
        for await (
          const event of client.events({
            signal: following.signal,
            onReconnect() {
              if (!streamLost) {
                term.notice("Lost the live stream; reconnecting every second.");
              }
              streamLost = true;
            },
            onPresence(change) {
              const told = presenceNotice(change, client.name);
              if (told !== undefined) term.notice(told);
            },
          })
        ) {
          if (streamLost) term.notice("Reconnected to the live stream.");
          streamLost = false;
          if (event.type === "gap") {
            term.notice(`${event.missed} messages went by while away.`);
            continue;
          }
          newest.unshift(event.message);
          newest.length = Math.min(newest.length, 5);
          term.showMessage(event.message, newest);
        }
        return;
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        if (error.status === 401 && await rejoin()) continue;
        term.notice(`The live stream was refused: ${error.message}`);
        return;
      }
    }
  })();

  const sendIn = (next: "red" | "black") => () => {
    color = next;
    term.notice(`Now sending in ${next}.`);
  };
  // A Map, so a message such as "constructor" is never taken for a command.
  const commands = new Map<string, () => Promise<void> | void>([
    ["/red", sendIn("red")],
    ["/black", sendIn("black")],
    ["/users", async () => term.notice(await whoIsHere(client))],
    ["/help", () =>
      term.notice(
        "/red, /black: the color you send in; /users: who is online; /quit: leave",
      )],
  ]);
  const send = (text: string) => client.post(text, { color });
  const unknown = (command: string) => () =>
    term.notice(
      `Unknown command ${
        printable(command)
      }: /help lists them; //text sends /text.`,
    );
  const actionOf = (line: string) => {
    const command = line.trim();
    // `//text` is the message `/text`.
    if (command.startsWith("//")) return () => send(line.replace("/", ""));
    if (command.startsWith("/")) {
      return commands.get(command) ?? unknown(command);
    }
    return () => send(line);
  };

  let notSent = 0;
  try {
    for (;;) {
      const line = typedEarly.shift() ?? await nextLine();
      if (leaving(line)) break;
      if (line!.trim() === "") continue;
      const action = actionOf(line!);
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          await action();
          reachable(true);
        } catch (error) {
          if (unreachable(error)) {
            reachable(false);
            term.notice(
              `Not sent, the service is unreachable: ${printable(line)}`,
            );
          } else if (error instanceof ServiceError && error.status === 401) {
            // Once: joined again, the line is tried a second time.
            if (attempt === 0 && await rejoin()) continue;
          } else if (error instanceof ServiceError) {
            term.notice(`Refused: ${error.message}`);
          } else throw error;
          notSent++;
        }
        break;
      }
    }
  } finally {
    following.abort();
    await follow;
    stopListening();
    term.restore();
  }
  const who = client.name;
  try {
    await client.unregister();
    write(`Goodbye, ${printable(who)}.\n`);
  } catch (error) {
    if (!unreachable(error) && !(error instanceof ServiceError)) throw error;
    write(
      `Left without unregistering ${printable(who)}: ${
        (error as Error).message
      }\n`,
    );
  }
  if (notSent > 0) {
    console.error(
      `error: ${lines(notSent)} ${notSent === 1 ? "was" : "were"} not sent.`,
    );
    return 1;
  }
  return 0;
}

if (import.meta.main) {
  let flags;
  try {
    ({ values: flags } = parseArgs({
      args: Deno.args,
      strict: true,
      options: {
        url: { type: "string", default: "http://localhost:8000/" },
        name: { type: "string" },
        help: { type: "boolean", default: false },
      },
    }));
    new URL(flags.url);
  } catch (error) {
    console.error(`error: ${(error as Error).message} (see --help)`);
    Deno.exit(2);
  }
  if (flags.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  Deno.exit(await chat(flags.url, flags.name));
}
