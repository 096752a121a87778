/**
 * Idle connections, held by a process of their own (each process may hold
 * only so many open files): a third send nothing, a third send half a
 * request header, a third make one request and then idle on the kept-alive
 * connection. Spread over many loopback source addresses, as many clients
 * would be. Each connection notes when the server closed it.
 *
 * Run as a program, it takes its options as JSON in its one argument,
 * prints one JSON line once every connection is open (or refused), and one
 * more once the server has closed them all, or `holdMs` later.
 * @module
 */

import net from "node:net";

/** How a connection idles. */
export type IdleKind = "silent" | "half-header" | "keep-alive";

const KINDS: readonly [IdleKind, ...IdleKind[]] = [
  "silent",
  "half-header",
  "keep-alive",
];

/** Options of {@linkcode idleFlood}. */
export interface IdleFloodOptions {
  /** The loopback port to connect to. */
  port: number;
  /** Source addresses (127.x.y.z), used in turn. */
  addresses: string[];
  count: number;
  /** How long to wait for the server to close them, once all are open. */
  holdMs: number;
}

/** What opening the connections came to. */
export interface Opened {
  opened: number;
  /** Connections refused, reset or failed before they were open, and keep-alive requests not answered 200. */
  failed: number;
  /** The first failure's message. */
  firstError?: string;
  /** When the last one was open, in ms since the epoch. */
  at: number;
}

/** One connection's life, in ms since the epoch. */
export interface HeldConnection {
  kind: IdleKind;
  openedAt: number;
  /** When it began to idle: when it opened, or for keep-alive when its answer had come. */
  idleFrom: number;
  /** When the server closed it, or `null` if it was still open after `holdMs`. */
  closedAt: number | null;
}

/** Idle connections being held by a child process. */
export interface IdleFlood {
  /** Settles once every connection is open or failed. */
  opened: Promise<Opened>;
  /** Settles once the server closed them all, or `holdMs` after they opened. */
  held: Promise<HeldConnection[]>;
  /** Ends the child at once (its connections close with it). */
  kill(): void;
}

/** `count` distinct loopback addresses, 127.0.`first`.1 onwards, 250 to a /24. */
export function loopbackAddresses(count: number, first = 1): string[] {
  return Array.from(
    { length: count },
    (_, i) => `127.0.${first + Math.floor(i / 250)}.${1 + (i % 250)}`,
  );
}

/** Starts a child process holding `options.count` idle connections. */
export function idleFlood(options: IdleFloodOptions): IdleFlood {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      import.meta.filename!,
      JSON.stringify(options),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const nextLine = async () => {
    while (!buffered.includes("\n")) {
      const { done, value } = await lines.read();
      if (done) throw new Error(`idle flood ended early: ${buffered}`);
      buffered += value;
    }
    const line = buffered.slice(0, buffered.indexOf("\n"));
    buffered = buffered.slice(line.length + 1);
    return JSON.parse(line);
  };
  const opened = nextLine() as Promise<Opened>;
  const held = opened.then(async () => {
    const connections = await nextLine() as HeldConnection[];
    await lines.cancel();
    await child.status;
    return connections;
  });
  return {
    opened,
    held,
    kill() {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    },
  };
}

const now = () => performance.timeOrigin + performance.now();

/** The child: opens, holds and watches the connections. */
async function hold(options: IdleFloodOptions): Promise<void> {
  const connections: HeldConnection[] = [];
  const sockets: net.Socket[] = [];
  let settled = 0;
  let failed = 0;
  let firstError: string | undefined;
  let wake = () => {};
  const open = (index: number) => {
    const kind = KINDS[index % KINDS.length] ?? KINDS[0];
    const socket = net.connect({
      host: "127.0.0.1",
      port: options.port,
      localAddress: options.addresses[index % options.addresses.length],
    });
    sockets.push(socket);
    const connection: HeldConnection = {
      kind,
      openedAt: 0,
      idleFrom: 0,
      closedAt: null,
    };
    let state: "connecting" | "asking" | "idle" | "failed" = "connecting";
    let answer = "";
    const settle = (failure?: string) => {
      settled++;
      if (failure === undefined) {
        state = "idle";
        connections.push(connection);
      } else {
        state = "failed";
        failed++;
        firstError ??= failure;
      }
      wake();
    };
    socket.on("connect", () => {
      connection.openedAt = connection.idleFrom = now();
      if (kind === "silent") return settle();
      socket.write(
        kind === "half-header"
          ? "GET /healthz HTTP/1.1\r\nHost: flood\r\n"
          : "GET /healthz HTTP/1.1\r\nHost: flood\r\n\r\n",
      );
      if (kind === "half-header") return settle();
      state = "asking";
    });
    socket.on("data", (chunk: Uint8Array) => {
      if (state !== "asking") return;
      answer += new TextDecoder().decode(chunk);
      if (!answer.includes("\r\n\r\n")) return;
      connection.idleFrom = now();
      settle(
        answer.startsWith("HTTP/1.1 200 ")
          ? undefined
          : answer.slice(0, answer.indexOf("\r\n")),
      );
    });
    const closed = (error?: Error) => {
      if (state === "idle") {
        connection.closedAt ??= now();
        wake();
      } else if (state !== "failed") {
        settle(error?.message ?? `closed while ${state}`);
      }
    };
    socket.on("error", closed);
    socket.on("end", () => closed());
    socket.on("close", () => closed());
  };
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  // In batches, so the listen queue is never overrun.
  for (let i = 0; i < options.count; i += 250) {
    for (let j = i; j < Math.min(options.count, i + 250); j++) open(j);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const openBy = now() + 60_000;
  while (settled < options.count && now() < openBy) await wait(100);
  const opened: Opened = {
    opened: connections.length,
    failed: failed + options.count - settled,
    firstError,
    at: now(),
  };
  console.log(JSON.stringify(opened));
  const holdUntil = now() + options.holdMs;
  while (
    connections.some((c) => c.closedAt === null) && now() < holdUntil
  ) {
    await wait(Math.min(250, holdUntil - now()));
  }
  console.log(JSON.stringify(connections));
  for (const socket of sockets) socket.destroy();
  Deno.exit(0);
}

if (import.meta.main) {
  const [options] = Deno.args;
  if (options === undefined) throw new Error("usage: idle_flood.ts OPTIONS");
  await hold(JSON.parse(options));
}
