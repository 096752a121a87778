/**
 * The terminal chat's session: joining (asking for a name until one is
 * accepted, waiting out a service that is down), following the stream,
 * sending what is typed, joining again when the service forgot the name,
 * and leaving.
 * @module
 */

import {
  type Message,
  MessagingClient,
  ServiceError,
} from "../client/client.ts";
import { actionOf, type Chat, presenceNotice } from "./commands.ts";
import {
  pipeTerminal,
  printable,
  type Terminal,
  ttyTerminal,
  write,
} from "./terminal.ts";

/** How long what is typed waits for the chat's user to be online, at most. */
const ONLINE_WAIT_MS = 2000;

/** The signals that end the chat as /quit does. */
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** How often joining is tried again while the service is unreachable. */
const RETRY_MS = 1000;

/** `fetch` fails with a TypeError when the service cannot be reached at all. */
const unreachable = (error: unknown) => error instanceof TypeError;

/** `1 line` or `2 lines`. */
const lines = (count: number) => `${count} line${count === 1 ? "" : "s"}`;

/** The end of input, a signal or `/quit`. */
const leaving = (line: string | null) =>
  line === null || line.trim() === "/quit";

/** One run of the chat, from joining to leaving. */
class Session implements Chat {
  readonly client: MessagingClient;
  readonly term: Terminal;
  color: "red" | "black" = "black";
  olderBefore?: number | null;
  readonly #url: string;
  readonly #tty = Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
  /** Whether the last call found the service unreachable. */
  #down = false;
  /** Resolved by a signal: it ends the chat at any point, joined or not. */
  readonly #quit = Promise.withResolvers<null>();
  #signalled = false;
  /** One read outstanding at a time, kept until a caller takes its line. */
  #reading: Promise<string | null> | undefined;
  /** Lines typed while joining, sent once joined. */
  readonly #typedEarly: string[] = [];
  #rejoining: Promise<boolean> | undefined;
  #notSent = 0;
  /** Resolved when the service says this chat's user is online. */
  readonly online = Promise.withResolvers<void>();

  constructor(url: string) {
    this.#url = url;
    this.client = new MessagingClient(url);
    this.term = this.#tty ? ttyTerminal(() => this.#title()) : pipeTerminal();
    // In raw mode Ctrl-C arrives as a key; SIGHUP is the terminal going away.
    for (const signal of SIGNALS) {
      Deno.addSignalListener(signal, this.#onSignal);
    }
  }

  #title(): string {
    const who = this.client.name ? `as ${this.client.name}` : "";
    return `Chat at ${this.#url}  ${who}  sending in ${this.color}  ` +
      "(/red /black /users /more /quit)";
  }

  #onSignal = () => {
    this.#signalled = true;
    this.#quit.resolve(null);
  };

  #reachable(ok: boolean) {
    if (ok && this.#down) this.term.notice("The service is back.");
    if (!ok && !this.#down) {
      this.term.notice(
        `The service at ${this.#url} is unreachable; retrying every second.`,
      );
    }
    this.#down = !ok;
  }

  /** The next line: `null` at the end of input or on a signal. */
  #nextLine(): Promise<string | null> {
    return this.#lineOr<never>();
  }

  /** The next line, or `undefined` once `ms` passed first. */
  async #lineWithin(ms: number): Promise<string | null | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeUp = new Promise<undefined>((resolve) =>
      timer = setTimeout(() => resolve(undefined), ms)
    );
    try {
      return await this.#lineOr(timeUp);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The next line, or what `other` gives first. A line is taken only by
   * the caller that got it: one that arrives after its caller stopped
   * waiting waits for the next.
   */
  async #lineOr<T>(other?: Promise<T>): Promise<string | null | T> {
    const reading = this.#reading ??= this.term.readLine();
    const got = await Promise.race([
      reading.then((line) => ({ line })),
      this.#quit.promise,
      ...(other === undefined ? [] : [other]),
    ]);
    if (typeof got !== "object" || got === null || !("line" in got)) {
      return got as null | T;
    }
    this.#reading = undefined;
    return got.line;
  }

  /** Gives back the signals and the terminal. */
  close(): void {
    for (const signal of SIGNALS) {
      Deno.removeSignalListener(signal, this.#onSignal);
    }
    this.term.restore();
  }

  /**
   * Leaving before joining fails when lines read were never sent, or when
   * a script's input ran out first: either way nothing it asked for was done.
   */
  #leaveBeforeJoining(line: string | null) {
    const inputEnded = line === null && !this.#signalled && !this.#tty;
    this.close();
    if (this.#typedEarly.length === 0 && !inputEnded) return 0;
    const why = this.#down
      ? `the service at ${this.#url} could not be reached`
      : "the input ended before a name was accepted";
    const count = this.#typedEarly.length;
    const read = count > 0 ? ` (${lines(count)} read)` : "";
    console.error(`error: ${why}; nothing was sent${read}.`);
    return 1;
  }

  /**
   * Asks until a name registers. A refused name is asked again; an
   * unreachable service is retried with the same name, and meanwhile the
   * user may still leave (a signal, the end of input, /quit). Returns the
   * exit code when the chat ends before joining.
   */
  async join(name: string | undefined): Promise<number | undefined> {
    let candidate = name;
    while (this.client.token === undefined) {
      if (candidate === undefined) {
        this.term.setPrompt("Your name: ");
        const line = await this.#nextLine();
        if (leaving(line)) return this.#leaveBeforeJoining(line);
        candidate = line!;
      }
      const tried = await this.#register(candidate);
      if (typeof tried === "number") return tried;
      if (tried === "refused") candidate = undefined;
    }
    this.term.setPrompt("> ");
    this.term.notice(
      `Joined as ${this.client.name}. Type a message, or /help.`,
    );
    return undefined;
  }

  /** One attempt to register `name`: done, refused, to retry, or the exit code. */
  async #register(
    name: string,
  ): Promise<"done" | "refused" | "retry" | number> {
    try {
      await this.client.register(name);
      this.#reachable(true);
      return "done";
    } catch (error) {
      if (unreachable(error)) {
        this.#reachable(false);
        const line = await this.#lineWithin(RETRY_MS);
        if (line !== undefined && leaving(line)) {
          return this.#leaveBeforeJoining(line);
        }
        if (line !== undefined) this.#typedEarly.push(line!);
        return "retry";
      }
      if (!(error instanceof ServiceError)) throw error;
      if (error.status === 404) {
        this.term.notice(
          `${this.#url} serves no messaging service (POST /users is 404).`,
        );
        this.close();
        return 1;
      }
      this.term.notice(`"${printable(name)}" cannot join: ${error.message}`);
      return "refused";
    }
  }

  /**
   * After a restart (or `--forget-users-after`) the service has forgotten
   * the name: take it again if it is free. Once at a time: a send and the
   * stream may both find out.
   */
  rejoin(refused: string | undefined): Promise<boolean> {
    // A refusal of a token this chat no longer holds is old news: it has
    // joined again since (a second join would find its own name taken).
    if (refused !== this.client.token) return Promise.resolve(true);
    return this.#rejoining ??= this.#joinAgain().finally(() =>
      this.#rejoining = undefined
    );
  }

  async #joinAgain(): Promise<boolean> {
    const who = printable(this.client.name!);
    try {
      await this.client.register(this.client.name!);
      this.term.notice(
        `The service had forgotten you (restarted?): joined again as ${who}.`,
      );
      return true;
    } catch (error) {
      if (!(error instanceof ServiceError) && !unreachable(error)) throw error;
      this.term.notice(
        `The service no longer knows you and "${who}" cannot join again: ${
          (error as Error).message
        }. /quit and join with another name.`,
      );
      return false;
    }
  }

  /**
   * Messages arrive on the event stream as they are stored; the library
   * follows it over a WebSocket as this chat's user and reconnects by
   * itself after the last id seen, so nothing retained is missed. A 401
   * (the socket closed with 1008) says the service forgot the user: once
   * joined again it follows as the new one.
   */
  async follow(signal: AbortSignal): Promise<void> {
    const stream = new MessageStream(this);
    for (let joins = 0; joins < 100; joins++) {
      const sent = this.client.token;
      try {
        return await stream.read(signal);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        if (error.status === 401 && await this.rejoin(sent)) continue;
        this.term.notice(`The live stream was refused: ${error.message}`);
        return;
      }
    }
  }

  /** Reads and does what is typed until the user leaves. */
  async converse(): Promise<void> {
    // Input given all at once (a pipe) would otherwise act before the
    // stream made the user online, and /users would call it "registered".
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.online.promise,
      new Promise((resolve) => timer = setTimeout(resolve, ONLINE_WAIT_MS)),
    ]);
    clearTimeout(timer);
    for (;;) {
      const line = this.#typedEarly.shift() ?? await this.#nextLine();
      if (leaving(line)) return;
      if (line!.trim() !== "") await this.#perform(line!);
    }
  }

  /** Does what `line` says, joining again once if the service forgot the user. */
  async #perform(line: string): Promise<void> {
    const action = actionOf(line, this);
    for (let attempt = 0; attempt < 2; attempt++) {
      const sent = this.client.token;
      try {
        await action();
        this.#reachable(true);
        return;
      } catch (error) {
        if (unreachable(error)) {
          this.#reachable(false);
          this.term.notice(
            `Not sent, the service is unreachable: ${printable(line)}`,
          );
        } else if (error instanceof ServiceError && error.status === 401) {
          // Once: joined again, the line is tried a second time.
          if (attempt === 0 && await this.rejoin(sent)) continue;
        } else if (error instanceof ServiceError) {
          this.term.notice(`Refused: ${error.message}`);
        } else throw error;
        this.#notSent++;
        return;
      }
    }
  }

  /** Unregisters and says goodbye; returns the exit code. */
  async leave(): Promise<number> {
    const who = printable(this.client.name);
    try {
      await this.client.unregister();
      write(`Goodbye, ${who}.\n`);
    } catch (error) {
      if (!unreachable(error) && !(error instanceof ServiceError)) throw error;
      write(
        `Left without unregistering ${who}: ${(error as Error).message}\n`,
      );
    }
    const notSent = this.#notSent;
    if (notSent === 0) return 0;
    const were = notSent === 1 ? "was" : "were";
    // A person saw each "Not sent" as it happened: a reminder, not an
    // error; a script learns it from standard error and the status.
    if (this.#tty) write(`(${lines(notSent)} ${were} not sent.)\n`);
    else console.error(`error: ${lines(notSent)} ${were} not sent.`);
    return 1;
  }
}

/** The stream as the chat shows it: the newest messages, and notices when it is lost and found. */
class MessageStream {
  readonly #session: Session;
  readonly #newest: Message[] = [];
  #lost = false;

  constructor(session: Session) {
    this.#session = session;
  }

  async read(signal: AbortSignal): Promise<void> {
    const session = this.#session;
    const { client, term } = session;
    const events = client.events({
      signal,
      onReconnect: () => {
        if (!this.#lost) {
          term.notice("Lost the live stream; reconnecting every second.");
        }
        this.#lost = true;
      },
      onPresence(change) {
        if (
          change.name === client.name && "online" in change && change.online
        ) {
          session.online.resolve();
        }
        const told = presenceNotice(change, client.name);
        if (told !== undefined) term.notice(told);
      },
    });
    for await (const event of events) {
      if (this.#lost) term.notice("Reconnected to the live stream.");
      this.#lost = false;
      if (event.type === "gap") {
        term.notice(`${event.missed} messages went by while away.`);
        continue;
      }
      // The catch-up comes oldest first: /more goes on below its first.
      if (this.#session.olderBefore === undefined) {
        this.#session.olderBefore = event.id;
      }
      this.#newest.unshift(event.message);
      this.#newest.length = Math.min(this.#newest.length, 5);
      term.showMessage(event.message, this.#newest);
    }
  }
}

/**
 * Runs the chat until the user leaves; returns the exit code: 1 when a line
 * read was not sent, or input over a pipe ended before joining, so a script
 * that pipes messages in learns that they did not go.
 */
export async function chat(
  url: string,
  name: string | undefined,
): Promise<number> {
  const session = new Session(url);
  const left = await session.join(name);
  if (left !== undefined) return left;
  const following = new AbortController();
  const follow = session.follow(following.signal);
  try {
    await session.converse();
  } finally {
    following.abort();
    await follow;
    session.close();
  }
  return await session.leave();
}
