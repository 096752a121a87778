/**
 * Writers: clients that register users, post messages and replace the
 * quote, every value unique, spread over every process, and log what each
 * write was told. A writer posts as a user it registered; when a post is
 * answered 401 (the store lost the user) it registers another.
 * @module
 */

import type { WriteKind, WriteRecord } from "./reconcile.ts";

/** How long a write may wait for its answer before it counts as unknown. */
const WRITE_TIMEOUT_MS = 10_000;

/** What the writers share. */
export interface WriterOptions {
  /** The base URLs of the processes, each ending in `/`. */
  urls: string[];
  writers: number;
  /** Writes each writer makes at most. */
  opsPerWriter: number;
  /** Pause between one writer's writes, in ms: keeps the CPU the run takes reasonable. */
  pauseMs: number;
  /** Makes values unique across runs sharing a store. */
  tag: string;
  /** Where every write is logged. */
  log: WriteRecord[];
}

/** One write, logged in `log`: its status, or none when no answer came. */
export async function write(
  log: WriteRecord[],
  url: string,
  kind: WriteKind,
  value: string,
  token?: string,
): Promise<{ status?: number; body?: unknown }> {
  const record: WriteRecord = { kind, value, start: performance.now(), end: 0 };
  log.push(record);
  const path = kind === "register" ? "users" : kind === "quote" ? "quote" : "";
  try {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: token ? { "x-messaging-token": token } : {},
      body: kind === "message" ? JSON.stringify({ text: value }) : value,
      signal: AbortSignal.timeout(WRITE_TIMEOUT_MS),
    });
    const text = await response.text();
    record.status = response.status;
    record.end = performance.now();
    try {
      return { status: response.status, body: JSON.parse(text) };
    } catch {
      return { status: response.status };
    }
  } catch {
    record.end = performance.now();
    return {};
  }
}

/** Registers `name` through `url`: its credential, or `undefined` when not acknowledged. */
export async function register(
  log: WriteRecord[],
  url: string,
  name: string,
): Promise<string | undefined> {
  const { status, body } = await write(log, url, "register", name);
  const token = (body as { token?: unknown } | undefined)?.token;
  return status === 200 && typeof token === "string" ? token : undefined;
}

/**
 * Runs the writers until each has made `opsPerWriter` writes or `signal`
 * aborts.
 *
 * @example Four writers on two processes
 * ```ts ignore
 * const log: WriteRecord[] = [];
 * await runWriters({ urls, writers: 4, opsPerWriter: 100, pauseMs: 20, tag: "a", log }, signal);
 * ```
 */
export async function runWriters(
  options: WriterOptions,
  signal: AbortSignal,
): Promise<void> {
  await Promise.all(
    Array.from(
      { length: options.writers },
      (_, w) => writer(options, w, signal),
    ),
  );
}

async function writer(
  { urls, opsPerWriter, pauseMs, tag, log }: WriterOptions,
  w: number,
  signal: AbortSignal,
): Promise<void> {
  let token: string | undefined;
  for (let op = 0; op < opsPerWriter && !signal.aborted; op++) {
    // Each writer starts on its own process and alternates, so every
    // process takes every kind of write.
    const url = urls[(w + op) % urls.length];
    if (url === undefined) throw new Error("no program URL to write to");
    const unique = `${tag}w${w}n${op}`;
    const roll = Math.random();
    if (token === undefined || roll < 0.05) {
      token = await register(log, url, unique) ?? token;
    } else if (roll < 0.85) {
      const { status } = await write(log, url, "message", `m ${unique}`, token);
      if (status === 401) token = undefined;
    } else {
      await write(log, url, "quote", `Q ${unique}.`);
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}
