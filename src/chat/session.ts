/**
 * The terminal chat's session: joining, following the stream, sending what
 * is typed, joining again when the service forgot the name, and leaving.
 * @module
 */

import {
  type Message,
  MessagingClient,
  ServiceError,
} from "../client/client.ts";
import { actionOf, type Chat, presenceNotice } from "./commands.ts";
import {
  FullScreen,
  pipeTerminal,
  printable,
  type Terminal,
  write,
} from "./terminal.ts";

/** How long what is typed waits, at most, for the user to be online. */
const ONLINE_WAIT_MS = 2000;

/** The signals that end the chat as /quit does. */
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** How often joining is tried again while the service is unreachable. */
const RETRY_MS = 1000;

/** `fetch` fails with a TypeError when the service cannot be reached at all. */
const unreachable = (error: unknown) => error instanceof TypeError;

const lines = (count: number) => `${count} line${count === 1 ? "" : "s"}`;

const leaving = (line: string | null | undefined) =>
  line === null || line?.trim() === "/quit";

/** What `promise` gives, or `undefined` once `ms` passed first (never without `ms`). */
function within<T>(promise: Promise<T>, ms?: number): Promise<T | undefined> {
  if (ms === undefined) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) =>
    timer = setTimeout(() => resolve(undefined), ms)
  );
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

class Session implements Chat {
  readonly client: MessagingClient;
  readonly term: Terminal;
  color: "red" | "black" = "black";
  olderBefore?: number | null;
  readonly #url: string;
  readonly #tty = Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
  /** Whether the last call found the service unreachable. */
  #down = false;
  /** A signal ends the chat at any point, joined or not. */
  readonly #quit = Promise.withResolvers<null>();
  #signalled = false;
  /** One read outstanding at a time, kept until a caller takes its line. */
  #reading: Promise<string | null> | undefined;
  /** Lines typed while joining, sent once joined. */
  readonly #typedEarly: string[] = [];
  #rejoining: Promise<boolean> | undefined;
  #notSent = 0;
  readonly online = Promise.withResolvers<void>();
  /** The five newest, newest first, as the full screen shows them. */
  #newest: { id: number; message: Message }[] = [];
  #firstId: number | undefined;
  #lost = false;

  constructor(url: string) {
    this.#url = url;
    this.client = new MessagingClient(url);
    this.term = this.#tty
      ? new FullScreen(() => this.#title())
      : pipeTerminal();
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

  /** The next line, `null` at end of input or a signal, or `undefined` after `ms` (keeping a late line). */
  async #nextLine(ms?: number): Promise<string | null | undefined> {
    const reading = this.#reading ??= this.term.readLine();
    const got = await within(
      Promise.race([reading.then((line) => ({ line })), this.#quit.promise]),
      ms,
    );
    if (got === null || got === undefined) return got;
    this.#reading = undefined;
    return got.line;
  }

  close(): void {
    for (const signal of SIGNALS) {
      Deno.removeSignalListener(signal, this.#onSignal);
    }
    this.term.restore();
  }

  /** Fails when lines read were never sent, or a script's input ran out. */
  #leaveBeforeJoining(line: string | null | undefined) {
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

  /** Asks until a name registers (the same one while unreachable); an exit code if the chat ends first. */
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
        const line = await this.#nextLine(RETRY_MS);
        if (leaving(line)) return this.#leaveBeforeJoining(line);
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

  /** The service forgot the name: take it again if free, once however many calls find out. */
  rejoin(refused: string | undefined): Promise<boolean> {
    // A refusal of an older token: joined again since.
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

  /** Follows the stream; a 401 (the service forgot the user) rejoins. */
  async follow(signal: AbortSignal): Promise<void> {
    for (let joins = 0; joins < 100; joins++) {
      const sent = this.client.token;
      try {
        return await this.#read(signal);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        if (error.status === 401 && await this.rejoin(sent)) continue;
        this.term.notice(`The live stream was refused: ${error.message}`);
        return;
      }
    }
  }

  /** The stream as the chat shows it, with notices when it is lost and found. */
  async #read(signal: AbortSignal): Promise<void> {
    const { client, term } = this;
    const events = client.events({
      signal,
      onReconnect: () => {
        if (!this.#lost) {
          term.notice("Lost the live stream; reconnecting every second.");
        }
        this.#lost = true;
      },
      onPresence: (change) => {
        if (
          change.name === client.name && "online" in change && change.online
        ) {
          this.online.resolve();
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
      this.#firstId ??= event.id;
      this.#newest = [event, ...this.#newest].slice(0, 5);
      term.showMessage(event.message, this.#newest.map((e) => e.message));
    }
  }

  /** A pipe keeps every line printed; the full screen only the newest five. */
  oldestShown(): number | undefined {
    return this.#tty ? this.#newest.at(-1)?.id : this.#firstId;
  }

  async converse(): Promise<void> {
    // Otherwise piped input acts before the stream makes the user online.
    await within(this.online.promise, ONLINE_WAIT_MS);
    for (;;) {
      const line = this.#typedEarly.shift() ?? await this.#nextLine();
      if (leaving(line)) return;
      if (line!.trim() !== "") await this.#perform(line!);
    }
  }

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
          if (attempt === 0 && await this.rejoin(sent)) continue;
        } else if (error instanceof ServiceError) {
          this.term.notice(`Refused: ${error.message}`);
        } else throw error;
        this.#notSent++;
        return;
      }
    }
  }

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
    // A person saw each "Not sent": a reminder, not an error.
    if (this.#tty) write(`(${lines(notSent)} ${were} not sent.)\n`);
    else console.error(`error: ${lines(notSent)} ${were} not sent.`);
    return 1;
  }
}

/**
 * Runs the chat until the user leaves. The exit code is 1 when a line read
 * was not sent, or piped input ended before joining.
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
