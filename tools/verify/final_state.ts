/**
 * The end of a run, read from outside: once the faults stop, a last message
 * (the sentinel) is posted after every other write; readers are given time
 * to receive it; then the whole history is read through a fresh stream from
 * `Last-Event-ID: 0`, and the user list, the quote and the newest messages
 * through every process, which must agree.
 * @module
 */

import { createParser } from "eventsource-parser";
import type { FinalState, WriteRecord } from "./reconcile.ts";
import { register, write } from "./writers.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` every 200 ms until it returns a value, for at most `ms`. */
async function within<T>(
  ms: number,
  probe: () => Promise<T | undefined>,
): Promise<T | undefined> {
  const deadline = performance.now() + ms;
  for (let tries = 0; tries < 10_000; tries++) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined || performance.now() > deadline) return value;
    await sleep(200);
  }
}

async function getJson(url: string, token?: string): Promise<unknown> {
  const response = await fetch(url, {
    headers: token ? { "x-messaging-token": token } : {},
    signal: AbortSignal.timeout(5000),
  });
  const body = await response.text();
  if (response.status !== 200) {
    throw new Error(`GET ${url}: ${response.status} ${body}`);
  }
  return JSON.parse(body);
}

/** Waits until every process answers `/readyz` with 200; throws after `ms`. */
export async function waitReady(urls: string[], ms: number): Promise<void> {
  for (const url of urls) {
    const ready = await within(ms, async () => {
      const response = await fetch(`${url}readyz`, {
        signal: AbortSignal.timeout(2000),
      });
      await response.body?.cancel();
      return response.status === 200 || undefined;
    });
    if (!ready) throw new Error(`${url} is not ready after ${ms} ms`);
  }
}

/** The user who posts the sentinel, and the sentinel's text. */
export interface Sentinel {
  token: string;
  text: string;
}

/**
 * Registers a user and posts the sentinel through `url`, retrying (each try
 * with new values, logged like every write) until both are acknowledged.
 */
export async function postSentinel(
  url: string,
  tag: string,
  log: WriteRecord[],
): Promise<Sentinel> {
  let token: string | undefined;
  for (let attempt = 0; attempt < 50; attempt++) {
    token ??= await register(log, url, `${tag}final${attempt}`);
    if (token !== undefined) {
      const text = `sentinel ${tag} ${attempt}`;
      const { status } = await write(log, url, "message", text, token);
      if (status === 200) return { token, text };
      if (status === 401) token = undefined;
    }
    await sleep(200);
  }
  throw new Error("the sentinel could not be posted in 50 tries");
}

/** Reads every message the store holds through `url`, up to the sentinel. */
async function readHistory(
  url: string,
  sentinel: string,
  timeoutMs: number,
  durable: boolean,
): Promise<{ id: number; text: string }[]> {
  const messages: { id: number; text: string }[] = [];
  let done = false;
  let problem: string | undefined;
  const stop = new AbortController();
  const parser = createParser({
    onEvent(event) {
      // A store that lost its data (Redis restarted empty) keeps its ids
      // going up, so reading from 0 rightly starts with a gap; anywhere else
      // a gap means the history was too short for the run.
      if (event.event === "gap" && durable) {
        problem =
          `the history lost messages (gap ${event.data}): raise --history`;
      }
      if ((event.event ?? "message") !== "message") return;
      const text = JSON.parse(event.data).text;
      messages.push({ id: Number(event.id), text });
      if (text === sentinel) done = true;
    },
  });
  const timer = setTimeout(() => stop.abort(), timeoutMs);
  try {
    const response = await fetch(`${url}events`, {
      headers: { "last-event-id": "0" },
      signal: stop.signal,
    });
    if (response.status !== 200 || !response.body) {
      await response.body?.cancel();
      throw new Error(`the final read was answered ${response.status}`);
    }
    const reader = response.body.pipeThrough(new TextDecoderStream())
      .getReader();
    while (!done && problem === undefined) {
      const { value, done: ended } = await reader.read();
      if (ended) throw new Error("the final read ended before the sentinel");
      parser.feed(value);
    }
    await reader.cancel();
  } catch (error) {
    if (stop.signal.aborted) {
      throw new Error(
        `the final read did not reach the sentinel in ${timeoutMs} ms`,
      );
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
  if (problem !== undefined) throw new Error(problem);
  return messages;
}

/**
 * Reads the final state through the first process, and checks the others
 * answer the same reads alike (allowing them 3 s to settle).
 *
 * @example After a run
 * ```ts ignore
 * const sentinel = await postSentinel(urls[0], "r1", writes);
 * const final = await readFinalState(urls, sentinel, true);
 * ```
 */
export async function readFinalState(
  urls: string[],
  sentinel: Sentinel,
  durable: boolean,
): Promise<FinalState> {
  const [primary, ...others] = urls;
  if (primary === undefined) throw new Error("no program URL to read from");
  const messages = await readHistory(primary, sentinel.text, 20_000, durable);
  const readsOf = async (url: string) =>
    JSON.stringify({
      users: (await getJson(`${url}users`, sentinel.token) as {
        users: string[];
      }).users,
      quote: await getJson(`${url}quote`),
      newest: await getJson(url),
    });
  const first = await readsOf(primary);
  const disagreements: string[] = [];
  for (const url of others) {
    const agreed = await within(
      3000,
      async () => (await readsOf(url)) === first || undefined,
    );
    if (!agreed) {
      disagreements.push(
        `${url} answers ${await readsOf(url).catch(String)}, ${
          urls[0]
        } ${first}`
          .slice(0, 500),
      );
    }
  }
  const { users, quote } = JSON.parse(first);
  return { users, messages, quote, disagreements };
}
