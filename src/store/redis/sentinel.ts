/**
 * Finding the master through Redis Sentinel, loaded only on connect (docs/redis.md, Finding the master).
 * @module
 */

import { createClient } from "redis";
import type { HostPort, SentinelAddress } from "./store_url.ts";

const SENTINEL_TIMEOUT_MS = 500;

/** `null` when it knows no master of that name. */
async function ask(
  sentinel: HostPort,
  masterName: string,
): Promise<HostPort | null> {
  const client = createClient({
    socket: {
      host: sentinel.host,
      port: sentinel.port,
      connectTimeout: SENTINEL_TIMEOUT_MS,
      reconnectStrategy: false,
    },
    disableOfflineQueue: true,
  });
  // Failures reach the caller through the promises below.
  client.on("error", () => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer in ${SENTINEL_TIMEOUT_MS} ms`)),
      SENTINEL_TIMEOUT_MS,
    );
  });
  const answer = client.connect().then(() =>
    client.sendCommand(["SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName])
  );
  // Once too late, its failure (the client destroyed) goes nowhere.
  answer.catch(() => {});
  try {
    const reply = await Promise.race([answer, late]);
    if (reply === null) return null;
    const [host, port] = reply as unknown as [string, string];
    return { host, port: Number(port) };
  } finally {
    clearTimeout(timer);
    client.destroy();
  }
}

/** Most named first, a tie to the sentinel listed first; throws, saying why, when none answers or knows it. */
export async function locateMasters(
  address: SentinelAddress,
): Promise<HostPort[]> {
  const answers = await Promise.all(
    address.sentinels.map((sentinel) =>
      ask(sentinel, address.masterName).catch((error: Error) =>
        `${sentinel.host}:${sentinel.port}: ${error.message || error}`
      )
    ),
  );
  const votes = new Map<string, { master: HostPort; count: number }>();
  for (const answer of answers) {
    if (answer === null || typeof answer === "string") continue;
    const key = `${answer.host}:${answer.port}`;
    const vote = votes.get(key) ?? { master: answer, count: 0 };
    vote.count++;
    votes.set(key, vote);
  }
  if (votes.size > 0) {
    return [...votes.values()].sort((a, b) => b.count - a.count).map((v) =>
      v.master
    );
  }
  const failures = answers.filter((a) => typeof a === "string");
  throw new Error(
    failures.length === answers.length
      ? `no sentinel answered (${failures.join("; ")})`
      : `no sentinel knows a master named ${address.masterName}`,
  );
}
