/**
 * The registered users in Redis: a hash of tokens, a sorted set for their
 * order, each name's look; tokens and the list kept locally while current.
 * @module
 */

import type {
  Allowance,
  Awaitable,
  RegisterResult,
  UserDirectory,
} from "../store.ts";
import type { RedisKernel } from "./kernel.ts";
import { KeptTokens, LocalCopy } from "./local_copy.ts";
import { lookOf } from "../../identity/name_skeleton.ts";
import { isClearToken, tokenDigest } from "../../identity/token_digest.ts";
import { oneOf, UnexpectedReply } from "./replies.ts";

const REGISTER_RESULTS = ["registered", "exists", "full"] as const;

/** Registering, removing and listing users over the kernel. */
export class RedisUsers implements UserDirectory {
  #kernel: RedisKernel;
  #maxUsers: number;
  #list: LocalCopy<string[]>;
  #tokens: KeptTokens;
  /** Notes activity for forgetting (the presence part sends it). */
  touchUser: (name: string) => void;

  constructor(
    kernel: RedisKernel,
    maxUsers: number,
    touch: (name: string) => void,
  ) {
    this.#kernel = kernel;
    this.#maxUsers = maxUsers;
    this.touchUser = touch;
    this.#list = new LocalCopy(kernel.subscription);
    this.#tokens = new KeptTokens(kernel.subscription);
    kernel.onNotice((notice) => {
      if (notice.kind === "removed") this.#tokens.forget(notice.name);
      if (notice.kind === "removed" || notice.kind === "registered") {
        this.#list.changed();
      }
    });
  }

  /** Stores the user unless taken or full, in one script. */
  async registerUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<RegisterResult> {
    const { users, order, sequence, channel, touched, looks } =
      this.#kernel.keys;
    const result = oneOf(
      "register",
      await this.#kernel.writes.run(
        "register",
        { users, order, sequence, channel, touched, looks },
        {
          name,
          token,
          maxUsers: String(this.#maxUsers),
          skeleton: lookOf(name),
        },
        allowance,
      ),
      REGISTER_RESULTS,
    );
    if (result === "registered") {
      // A token kept for an earlier holder of the name, whose removal
      // notice may still be on its way, must not outlive this.
      this.#tokens.forget(name);
      this.#list.changed();
    }
    return result;
  }

  /** The token of `name`, if registered: from the kept tokens while they are current, else from Redis. */
  tokenOf(name: string): Awaitable<string | undefined> {
    return this.#tokens.tokenOf(
      name,
      () => this.#kernel.read((c) => c.hGet(this.#kernel.keys.users, name)),
    );
  }

  /** Removes `name` while its token is still `token`, in one script. */
  async removeUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<boolean> {
    const { users, order, channel, touched, held, looks } = this.#kernel.keys;
    const result = oneOf(
      "remove",
      await this.#kernel.writes.run(
        "remove",
        { users, order, channel, touched, held, looks },
        { name, token },
        allowance,
      ),
      ["removed", "kept"],
    );
    if (result === "kept") return false;
    this.#tokens.forget(name);
    this.#list.changed();
    return true;
  }

  /** Names in registration order, from the local copy while it is current. */
  listUsers(): Awaitable<string[]> {
    const kernel = this.#kernel;
    return this.#list.read(() =>
      kernel.load(() => kernel.read((c) => c.zRange(kernel.keys.order, 0, -1)))
    );
  }

  /** How many users are registered (`HLEN`), without listing them. */
  userCount(): Promise<number> {
    return this.#kernel.read((c) => c.hLen(this.#kernel.keys.users));
  }

  /**
   * Converts the users an earlier version left: a token kept in clear
   * becomes its digest and a name gains its look, each in one step that
   * does nothing if the user changed meanwhile.
   */
  async convertEarlier(): Promise<void> {
    const { users, looks, converted } = this.#kernel.keys;
    if (await this.#kernel.read((c) => c.get(converted)) !== null) return;
    let cursor = "0";
    // HSCAN ends by returning cursor 0; the bound only guards a Redis that never does.
    for (let step = 0; step < 10_000_000; step++) {
      const reply = await this.#kernel.script("usersToConvert", {
        users,
        looks,
      }, { cursor, count: "500" });
      if (
        !Array.isArray(reply) || reply.some((item) => typeof item !== "string")
      ) throw new UnexpectedReply("usersToConvert", reply);
      const [next, ...found] = reply as string[];
      for (let i = 0; i + 1 < found.length; i += 2) {
        const name = found[i]!, stored = found[i + 1]!;
        await this.#kernel.script("convertUser", { users, looks }, {
          name,
          stored,
          digest: isClearToken(stored) ? tokenDigest(stored) : stored,
          skeleton: lookOf(name),
        });
      }
      if (next === "0") {
        await this.#kernel.read((c) => c.setIfAbsent(converted, "1"));
        return;
      }
      cursor = next!;
    }
  }
}
