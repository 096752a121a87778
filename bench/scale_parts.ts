/**
 * The pieces `bench/scale.ts` builds its runs from: server processes
 * sharing one port and one Redis (the program, or the plain fan-out floor),
 * the follower processes of `bench/scale_readers.ts` and their line
 * protocol, the poster, and CPU and memory read from /proc. Every child is
 * remembered so that {@linkcode killAll} can end them, however the run ends.
 * @module
 */

import { readProc, statusMb } from "./proc.ts";
import {
  type RedisServer,
  startRedis,
} from "../tests/_support/redis_server.ts";
import { type RunningServer, startServer } from "../tests/_support/program.ts";

const FLOOR = new URL("./fanout_floor.ts", import.meta.url).pathname;
const READERS = new URL("./scale_readers.ts", import.meta.url).pathname;

export const now = () => performance.timeOrigin + performance.now();
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const sum = (xs: number[]) => xs.reduce((total, x) => total + x, 0);

const children = new Set<Deno.ChildProcess>();
const redises = new Set<RedisServer>();

/** Ends every child still running (servers, followers, Redis) at once. */
export async function killAll(): Promise<void> {
  for (const child of children) {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }
  children.clear();
  for (const redis of redises) await redis.kill();
  redises.clear();
}

/** A throw-away Redis, killed by {@linkcode killAll} if not before. */
export async function freshRedis(): Promise<RedisServer> {
  const redis = await startRedis();
  redises.add(redis);
  return redis;
}

/** CPU seconds (user and system) process `pid` has used; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  const stat = readProc(`/proc/${pid}/stat`);
  // The command name, in parentheses, may hold spaces: count after it.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
}

/** CPU seconds the whole machine has been busy (every core, all but idle and iowait). */
export function machineBusySeconds(): number {
  const line = readProc("/proc/stat").split("\n")[0] ?? "";
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(
    /\s+/,
  ).map(Number);
  return [user, nice, system, irq, softirq, steal]
    .reduce((t: number, x) => t + (x ?? 0), 0) / 100;
}

/** The load average over the last minute. */
export const loadAverage = () =>
  Number(readProc("/proc/loadavg").split(" ")[0]);

export const rssMb = (pid: number) => statusMb(pid, "VmRSS");

/**
 * The program's flags for the steps and storms: --max-streams raised from its shipped
 * 10,000 to what a process may hold under the 20,000-file limit. The
 * per-client caps stay as shipped: each follower has an address of its own.
 */
export const PROGRAM_ARGS = ["--max-streams=19900"];

/** Which server a run measures. */
export type Target = "program" | "floor";

/** What every program process is started with beyond its port and store. */
export interface ServerOptions {
  target: Target;
  port: number;
  store: string;
  /** The program's flags beyond port, store, `--quiet` and `--reuse-port`. */
  args: string[];
}

/** Starts one server process on the shared port. */
export async function startOne(options: ServerOptions): Promise<RunningServer> {
  const { target, port, store, args } = options;
  const server = target === "floor"
    ? await startServer([], {}, {
      command: [
        "deno",
        "run",
        "-A",
        FLOOR,
        "--hostname=127.0.0.1",
        `--port=${port}`,
        `--store=${store}`,
      ],
      discardStderr: true,
    })
    : await startServer(
      [
        `--port=${port}`,
        `--store=${store}`,
        "--quiet",
        "--reuse-port",
        ...args,
      ],
      {},
      // Storms start processes while the host is saturated.
      { discardStderr: true, startMs: 60_000 },
    );
  children.add(server.process);
  server.process.status.then(() => children.delete(server.process));
  return server;
}

/** One follower process and its line protocol. */
export class Readers {
  readonly process: Deno.ChildProcess;
  readonly count: number;
  #lines: ReadableStreamDefaultReader<string>;
  #buffered = "";
  #writer: WritableStreamDefaultWriter<Uint8Array>;

  constructor(options: {
    port: number;
    count: number;
    first: number;
    transport: string;
  }) {
    this.count = options.count;
    this.process = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        READERS,
        `--target=127.0.0.1:${options.port}`,
        `--count=${options.count}`,
        `--first=${options.first}`,
        `--transport=${options.transport}`,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    children.add(this.process);
    this.process.status.then(() => children.delete(this.process));
    this.#lines = this.process.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    this.#writer = this.process.stdin.getWriter();
  }

  /** The next JSON line the followers print, within `timeoutMs`. */
  async next<T>(timeoutMs: number): Promise<T> {
    const deadline = now() + timeoutMs;
    while (!this.#buffered.includes("\n")) {
      const left = deadline - now();
      if (left <= 0) throw new Error("the followers did not answer in time");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const result = await Promise.race([
        this.#lines.read(),
        new Promise<null>((r) => timer = setTimeout(() => r(null), left)),
      ]);
      clearTimeout(timer);
      if (result === null) continue;
      if (result.done) throw new Error("the followers' process ended");
      this.#buffered += result.value;
    }
    const nl = this.#buffered.indexOf("\n");
    const line = this.#buffered.slice(0, nl);
    this.#buffered = this.#buffered.slice(nl + 1);
    return JSON.parse(line);
  }

  /** Sends one command and waits for its answer. */
  async ask<T>(command: object, timeoutMs = 60_000): Promise<T> {
    await this.#writer.write(
      new TextEncoder().encode(JSON.stringify(command) + "\n"),
    );
    return await this.next<T>(timeoutMs);
  }

  async quit(): Promise<void> {
    await this.#writer.write(new TextEncoder().encode('{"cmd":"quit"}\n'))
      .catch(() => {});
    const timer = setTimeout(() => this.process.kill("SIGKILL"), 10_000);
    await this.process.status;
    clearTimeout(timer);
  }
}

/** What the followers' processes count; `caughtUp` in answer to status. */
export interface ReaderCounts {
  ready?: boolean;
  ms?: number;
  caughtUp?: number;
  open: number;
  opens: number;
  reconnects: number;
  errors: number;
  pings: number;
  missed: number;
  received: number;
  refusedWithoutRetryAfter: number;
  /** Handshakes given up after 30 s unanswered. */
  handshakeTimeouts?: number;
  refused: Record<string, number>;
  /** How open streams ended: a WebSocket close code, or `no close frame`. */
  ended?: Record<string, number>;
  /** With status: where those not yet caught up are (`connecting`, `asking`, `open` but behind, `waiting`). */
  behind?: Record<string, number>;
  /** With status: a few silent followers' source addresses, to find their server side with `ss`. */
  silent?: string[];
}

/** A followers' process's answer to report. */
export interface ReaderReport extends ReaderCounts {
  delays: number[];
  lost: number;
  duplicated: number;
  followersWithLoss: number;
}

/** Adds up the counts of several followers' processes. */
export function addCounts(all: ReaderCounts[]) {
  const merged = (key: "refused" | "ended" | "behind") => {
    const into: Record<string, number> = {};
    for (const c of all) {
      for (const [k, n] of Object.entries(c[key] ?? {})) {
        into[k] = (into[k] ?? 0) + n;
      }
    }
    return into;
  };
  const total = (
    key: keyof Omit<ReaderCounts, "refused" | "ready" | "ended" | "behind">,
  ) => sum(all.map((c) => Number(c[key] ?? 0)));
  return {
    open: total("open"),
    caughtUp: total("caughtUp"),
    reconnects: total("reconnects"),
    errors: total("errors"),
    pings: total("pings"),
    missed: total("missed"),
    received: total("received"),
    refusedWithoutRetryAfter: total("refusedWithoutRetryAfter"),
    handshakeTimeouts: total("handshakeTimeouts"),
    refused: merged("refused"),
    ended: merged("ended"),
    behind: merged("behind"),
    silent: all.flatMap((c) => c.silent ?? []).slice(0, 5),
  };
}

/** Registers the poster and posts through the shared port. */
export class Poster {
  #token = "";
  readonly url: string;
  constructor(port: number) {
    this.url = `http://127.0.0.1:${port}/`;
  }

  async register(): Promise<void> {
    const res = await fetch(`${this.url}users`, {
      method: "POST",
      body: "poster",
      signal: AbortSignal.timeout(10_000),
    });
    this.#token = (await res.json()).token;
  }

  /** Why the last post that was not stored was not: its status and body, or the error. */
  lastFailure = "";

  /** Posts one message; the time it was sent, or undefined if not stored. */
  async post(text: string): Promise<number | undefined> {
    const at = now();
    try {
      const res = await fetch(this.url, {
        method: "POST",
        headers: { "x-messaging-token": this.#token },
        body: JSON.stringify({ text }),
        signal: AbortSignal.timeout(30_000),
      });
      const body = await res.text();
      if (res.status === 200) return at;
      this.lastFailure = `${res.status} ${body} after ${
        (now() - at).toFixed(0)
      } ms`;
    } catch (error) {
      this.lastFailure = `${(error as Error).message} after ${
        (now() - at).toFixed(0)
      } ms`;
    }
    return undefined;
  }
}

/** Splits `n` followers over `processes` as evenly as can be. */
export function split(n: number, processes: number): number[] {
  return Array.from(
    { length: processes },
    (_, i) => Math.floor(n / processes) + (i < n % processes ? 1 : 0),
  );
}

/**
 * Posts `posts` messages `interval` apart; the send time of each id, and
 * the longest a post took to be answered.
 */
export async function postAll(
  poster: Poster,
  posts: number,
  interval: number,
): Promise<{ sent: Record<string, number>; slowestMs: number }> {
  const sent: Record<string, number> = {};
  let slowestMs = 0;
  for (let id = 1; id <= posts; id++) {
    const started = now();
    const at = await poster.post(`post ${id}`);
    if (at === undefined) {
      throw new Error(`post ${id} was not stored: ${poster.lastFailure}`);
    }
    sent[id] = at;
    slowestMs = Math.max(slowestMs, now() - started);
    await sleep(Math.max(0, started + interval - now()));
  }
  return { sent, slowestMs };
}

/** Waits (at most `ms`) until every follower has every id up to `upTo`. */
export async function waitCaughtUp(
  readers: Readers[],
  n: number,
  upTo: number,
  ms: number,
): Promise<number> {
  const deadline = now() + ms;
  let caughtUp = 0;
  while (now() < deadline) {
    const all = await Promise.all(
      readers.map((r) => r.ask<ReaderCounts>({ cmd: "status", upTo })),
    );
    caughtUp = addCounts(all).caughtUp;
    if (caughtUp >= n) break;
    await sleep(100);
  }
  return caughtUp;
}
