/** The quote in Redis: one key, kept locally while current. @module */

import {
  type Allowance,
  type Awaitable,
  INITIAL_QUOTE,
  type QuoteCell,
} from "../store.ts";
import type { RedisKernel } from "./kernel.ts";
import { LocalCopy } from "./local_copy.ts";
import { UnexpectedReply } from "./replies.ts";

export class RedisQuote implements QuoteCell {
  #kernel: RedisKernel;
  #copy: LocalCopy<string>;

  constructor(kernel: RedisKernel) {
    this.#kernel = kernel;
    this.#copy = new LocalCopy(kernel.subscription);
    kernel.onNotice((notice) => {
      if (notice.kind === "quote") this.#copy.changed();
    });
  }

  getQuote(): Awaitable<string> {
    const kernel = this.#kernel;
    return this.#copy.read(() =>
      kernel.load(async () =>
        (await kernel.read((c) => c.get(kernel.keys.quote))) ?? INITIAL_QUOTE
      )
    );
  }

  /** Replace and notice in one script. */
  async setQuote(quote: string, allowance?: Allowance): Promise<void> {
    const { quote: quoteKey, channel } = this.#kernel.keys;
    const result = await this.#kernel.writes.run(
      "setQuote",
      { quoteKey, channel },
      { quote },
      allowance,
    );
    if (result !== "set") throw new UnexpectedReply("setQuote", result);
    this.#copy.changed();
  }
}
