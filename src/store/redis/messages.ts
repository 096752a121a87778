/**
 * The message log in Redis: a list of `<id> <json>` entries, newest first,
 * and the id sequence; the newest kept locally while current.
 * @module
 */

import type {
  Allowance,
  Awaitable,
  MessageLog,
  MessagePage,
  RecentMessages,
} from "../store.ts";
import type { RedisKernel } from "./kernel.ts";
import { LocalCopy } from "./local_copy.ts";
import {
  historyEntry,
  messageId,
  messagePage,
  recentMessages,
} from "./replies.ts";

export class RedisMessages implements MessageLog {
  #kernel: RedisKernel;
  #history: number;
  #newest: LocalCopy<readonly string[]>;
  #newestLimit = 0;

  constructor(kernel: RedisKernel, history: number) {
    this.#kernel = kernel;
    this.#history = history;
    this.#newest = new LocalCopy(kernel.subscription);
    kernel.onNotice((notice) => {
      if (notice.kind === "message") this.#newest.changed();
    });
  }

  /** Insert, trim and notice in one script. */
  async addMessage(message: string, allowance?: Allowance): Promise<number> {
    const kernel = this.#kernel;
    const { messages, messageSequence, channel } = kernel.keys;
    const id = messageId(
      "addMessage",
      await kernel.writes.run(
        "addMessage",
        { messages, sequence: messageSequence, channel },
        {
          message,
          history: String(this.#history),
          floor: String(kernel.highestId),
        },
        allowance,
      ),
    );
    kernel.sawId(id);
    this.#newest.changed();
    return id;
  }

  /** From the local copy while it is current. */
  newestMessages(limit: number): Awaitable<readonly string[]> {
    if (limit !== this.#newestLimit) {
      this.#newestLimit = limit;
      this.#newest.changed();
    }
    const kernel = this.#kernel;
    return this.#newest.read(() =>
      kernel.load(async () => {
        const entries = await kernel.read((c) =>
          c.lRange(kernel.keys.messages, 0, limit - 1)
        );
        return entries.map((entry) => historyEntry("LRANGE", entry).json);
      })
    );
  }

  /** In one round trip that reads only those. */
  async recentMessages(
    afterId: number,
    limit?: number,
  ): Promise<RecentMessages> {
    const { messages, messageSequence } = this.#kernel.keys;
    const reply = await this.#kernel.script("recent", {
      messages,
      sequence: messageSequence,
    }, { afterId: String(afterId), limit: String(limit ?? this.#history) });
    const recent = recentMessages(reply, afterId);
    this.#kernel.sawId(recent.newestId);
    return recent;
  }

  /** A page of the history below `before`, newest first, in one round trip that reads only the page. */
  async olderMessages(
    before: number | undefined,
    limit: number,
  ): Promise<MessagePage> {
    const { messages } = this.#kernel.keys;
    // Above every id: ids are safe integers, and Lua's numbers hold this one exactly.
    const below = before ?? Number.MAX_SAFE_INTEGER;
    const reply = await this.#kernel.script("older", { messages }, {
      before: String(below),
      limit: String(limit),
    });
    return messagePage(reply, below, limit);
  }
}
