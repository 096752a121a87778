/**
 * Replies checked before they are believed: another shape is a fault (500), never a made-up value.
 * @module
 */

import type { MessagePage, RecentMessages, StoredMessage } from "../store.ts";

/** A reply Redis should not have sent. */
export class UnexpectedReply extends Error {
  constructor(command: string, reply: unknown) {
    super(
      `unexpected reply to ${command}: ${
        JSON.stringify(reply)?.slice(0, 200) ?? String(reply)
      }`,
    );
    this.name = "UnexpectedReply";
  }
}

export function oneOf<const T extends string>(
  command: string,
  reply: unknown,
  expected: readonly T[],
): T {
  if (!expected.includes(reply as T)) throw new UnexpectedReply(command, reply);
  return reply as T;
}

export function listOf<T extends unknown[]>(
  command: string,
  reply: unknown,
  isItem: (item: unknown) => boolean,
  length?: number,
): T {
  if (
    !Array.isArray(reply) || !reply.every(isItem) ||
    (length !== undefined && reply.length !== length)
  ) throw new UnexpectedReply(command, reply);
  return reply as T;
}

export const isString = (item: unknown): boolean => typeof item === "string";

export function messageId(command: string, reply: unknown): number {
  const id = typeof reply === "string" && /^\d{1,16}$/.test(reply)
    ? Number(reply)
    : reply;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) {
    throw new UnexpectedReply(command, reply);
  }
  return id;
}

export function historyEntry(command: string, entry: unknown): StoredMessage {
  const space = typeof entry === "string" ? entry.indexOf(" ") : -1;
  if (space === -1) throw new UnexpectedReply(command, entry);
  const text = entry as string;
  return {
    id: messageId(command, text.slice(0, space)),
    json: text.slice(space + 1),
  };
}

/** `check.lua`'s reply: Redis's `TIME` (in ms since the epoch), the generation (`null` when gone), the newest id. */
export function checkReply(
  reply: unknown,
): { redisNow: number; generation: string | null; newestId: number } {
  if (!Array.isArray(reply) || reply.length !== 4) {
    throw new UnexpectedReply("check", reply);
  }
  const [seconds, micros, generation, newest] = reply;
  if (
    typeof seconds !== "string" || !/^\d{1,12}$/.test(seconds) ||
    typeof micros !== "string" || !/^\d{1,6}$/.test(micros) ||
    (generation !== null && typeof generation !== "string")
  ) throw new UnexpectedReply("check", reply);
  return {
    redisNow: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000),
    generation,
    newestId: newest === null ? 0 : messageId("check", newest),
  };
}

/** The `recent` script answers the newest id, the oldest retained id (or 0), then the entries; `wholeHistory`: its limit was the history's. */
export function recentMessages(
  reply: unknown,
  afterId: number,
  wholeHistory = true,
): RecentMessages {
  if (!Array.isArray(reply) || reply.length < 2) {
    throw new UnexpectedReply("recent", reply);
  }
  const newestId = messageId("recent", reply[0]);
  const oldest = messageId("recent", reply[1]);
  const messages: StoredMessage[] = [];
  for (let i = reply.length - 1; i >= 2; i--) {
    const message = historyEntry("recent", reply[i]);
    if (message.id <= afterId || message.id > newestId) {
      throw new UnexpectedReply("recent", reply);
    }
    messages.push(message);
  }
  // Read through the whole history, every id above afterId not here is
  // missed: gone from the history, or skipped where Redis lost writes (a
  // restart from an older snapshot; ids go on above the lost ones).
  const firstRetained = oldest === 0 ? newestId + 1 : oldest;
  const missed = wholeHistory
    ? newestId - afterId - messages.length
    : Math.min(newestId, firstRetained - 1) - afterId;
  return { messages, newestId, missed: Math.max(0, missed) };
}

/** The `older` script's up to `limit + 1` entries below `before`, newest first, as a page. */
export function messagePage(
  reply: unknown,
  before: number,
  limit: number,
): MessagePage {
  if (!Array.isArray(reply) || reply.length > limit + 1) {
    throw new UnexpectedReply("older", reply);
  }
  const messages: StoredMessage[] = [];
  let above = before;
  for (const entry of reply) {
    const message = historyEntry("older", entry);
    if (message.id >= above) throw new UnexpectedReply("older", reply);
    above = message.id;
    messages.push(message);
  }
  const more = messages.length > limit;
  if (more) messages.pop();
  return { messages, next: more ? messages[messages.length - 1]!.id : null };
}
