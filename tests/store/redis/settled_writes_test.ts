/**
 * Settled writes on a real `redis-server`, with the faults of a lost
 * connection injected between the store and Redis: a reply lost after the
 * write ran, an attempt lost before it ran, a Redis that answers only after
 * the fence. Each write is answered only once its outcome is known: its
 * result (applied once), or 503 when it did not and never will happen.
 */

import assert from "node:assert/strict";
import {
  CommandFailed,
  type RedisConnection,
} from "../../../src/store/redis/redis_connection.ts";
import { CommandGate } from "../../../src/store/redis/command_gate.ts";
import {
  SettledWrites,
  SETTLING,
  WriteOutcomeUnknown,
} from "../../../src/store/redis/settled_writes.ts";
import { UnexpectedReply } from "../../../src/store/redis/replies.ts";
import { StoreUnavailableError } from "../../../src/store/store.ts";
import { redisServerPath } from "../../_support/redis_server.ts";
import {
  sharedRedisConnection,
  sharedRedisServer,
} from "../../_support/call.ts";
import { itemAt } from "../../_support/item_at.ts";

const ignore = redisServerPath() === undefined;

/** What the connection does with the next attempt: pass it on, or fail it as a lost connection would. */
type Fault = "pass" | "lose-reply" | "lose-attempt" | "offline" | "oom";

interface Harness {
  writes: SettledWrites;
  redis: RedisConnection;
  /** Faults for the next attempts, in order; then every attempt passes. */
  faults: Fault[];
  /** How many attempts reached the connection. */
  attempts: () => number;
  /** The attempts lost before they reached Redis, to deliver later. */
  lost: Parameters<RedisConnection["run"]>[];
  key: (name: string) => string;
  addMessage: (json: string) => Promise<string>;
  history: () => Promise<string[]>;
}

function settledTest(
  name: string,
  fn: (h: Harness) => Promise<void>,
  windowMs = 1000,
) {
  Deno.test({
    name,
    ignore,
    async fn() {
      const redis = await sharedRedisConnection();
      const faults: Fault[] = [];
      const lost: Parameters<RedisConnection["run"]>[] = [];
      let attempts = 0;
      const faulty: RedisConnection = Object.create(redis);
      faulty.run = async (script, keys, args) => {
        attempts++;
        switch (faults.shift() ?? "pass") {
          case "lose-reply":
            await redis.run(script, keys, args);
            throw new CommandFailed("unknown", "reply lost");
          case "lose-attempt":
            lost.push([script, keys, args]);
            throw new CommandFailed("unknown", "attempt lost");
          case "offline":
            throw new CommandFailed("unsent", "offline");
          case "oom":
            throw new CommandFailed("refused", "OOM");
        }
        return await redis.run(script, keys, args);
      };
      const gate = new CommandGate(faulty, { timeoutMs: 5000, maxPending: 10 });
      const prefix = `settled:${crypto.randomUUID()}:`;
      const key = (name: string) => prefix + name;
      const writes = new SettledWrites(faulty, gate, {
        prefix,
        timeoutMs: windowMs,
      });
      const now = Date.now();
      writes.observeClock(now, now, now);
      try {
        await fn({
          writes,
          redis,
          faults,
          attempts: () => attempts,
          lost,
          key,
          addMessage: (json) =>
            writes.run("addMessage", {
              messages: key("history"),
              sequence: key("seq"),
              channel: key("changes"),
            }, { message: json, history: "100", floor: "0" }),
          history: () => redis.lRange(key("history"), 0, -1),
        });
      } finally {
        writes.close();
        gate.close();
        await redis.close();
      }
    },
  });
}

/** Every result recorded under this process's records, in no order. */
async function records(h: Harness): Promise<string[]> {
  const server = await sharedRedisServer();
  const keys = (await server.cli("KEYS", `${h.writes.records}*`)).split("\n")
    .filter((k) => k !== "");
  const values = [];
  for (const key of keys) {
    const fields = (await server.cli("HVALS", key)).split("\n");
    values.push(...fields.filter((v) => v !== ""));
  }
  return values.sort();
}

settledTest(
  "a reply lost after the write ran: sent again, it answers the result, and the write happened once",
  async (h) => {
    h.faults.push("lose-reply", "lose-reply");
    assert.equal(await h.addMessage('{"n":1}'), "1");
    assert.equal(h.attempts(), 3);
    assert.deepEqual(await h.history(), ['1 {"n":1}']);
  },
);

settledTest(
  "an attempt lost before it ran: sent again, it runs, once",
  async (h) => {
    h.faults.push("lose-attempt");
    assert.equal(await h.addMessage('{"n":1}'), "1");
    assert.deepEqual(await h.history(), ['1 {"n":1}']);
  },
);

settledTest(
  "an attempt in doubt until past its fence is answered 503 only once Redis says it did nothing, and a stray copy of it arriving later does nothing either",
  async (h) => {
    // The attempt is lost, and the connection stays unusable past the fence.
    h.faults.push("lose-attempt", "offline", "offline", "offline");
    await assert.rejects(
      h.addMessage('{"n":1}'),
      (error) =>
        error instanceof StoreUnavailableError &&
        !(error instanceof CommandFailed) && /fence/.test(error.message),
    );
    assert.ok(h.attempts() >= 5);
    assert.deepEqual(await h.history(), []);
    // The lost attempt, delivered now: it finds its fence passed.
    assert.equal(h.lost.length, 1);
    assert.equal(await h.redis.run(...itemAt(h.lost, 0)), "late");
    assert.deepEqual(await h.history(), []);
    assert.deepEqual(await records(h), []);
  },
  100,
);

settledTest(
  "a write that never left, or that Redis refused before any attempt was in doubt, is 503 at once: one attempt",
  async (h) => {
    for (const fault of ["offline", "oom"] as const) {
      h.faults.push(fault);
      const before = h.attempts();
      await assert.rejects(h.addMessage("{}"), CommandFailed);
      assert.equal(h.attempts(), before + 1);
    }
    assert.deepEqual(await h.history(), []);
  },
);

settledTest(
  "once an attempt is in doubt, a refusal settles nothing: it is sent again until Redis answers",
  async (h) => {
    h.faults.push("lose-reply", "oom", "offline", "oom");
    assert.equal(await h.addMessage('{"n":1}'), "1");
    assert.equal(h.attempts(), 5);
    assert.deepEqual(await h.history(), ['1 {"n":1}']);
  },
);

settledTest(
  "records are kept while their write may ask for them, and removed once every fence has passed",
  async (h) => {
    for (let i = 0; i < 5; i++) await h.addMessage(`{"n":${i}}`);
    assert.equal((await records(h)).length, 5);
    // Should this process die now, its records would expire.
    const server = await sharedRedisServer();
    for (
      const key of (await server.cli("KEYS", `${h.writes.records}*`)).split(
        "\n",
      )
    ) {
      assert.ok(Number(await server.cli("PTTL", key)) > 3_500_000, key);
    }
    await h.writes.tick();
    assert.equal((await records(h)).length, 5, "fences not yet passed");
    // A write whose attempts are in doubt for a while.
    h.faults.push("lose-reply", "offline", "offline", "offline", "offline");
    const doubtful = h.addMessage('{"n":"doubt"}');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await h.writes.tick();
    assert.deepEqual(
      await records(h),
      ["6"],
      "the settled ones go; the one in doubt stays",
    );
    assert.equal(await doubtful, "6");
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await h.writes.tick();
    await h.writes.tick();
    assert.deepEqual(await records(h), []);
  },
  50,
);

settledTest(
  "a write still in doubt when the store closes gives up as unknown (a fault), never as 503",
  async (h) => {
    h.faults.push(...Array<Fault>(50).fill("lose-attempt"));
    const write = h.addMessage("{}");
    await new Promise((resolve) => setTimeout(resolve, 100));
    h.writes.close();
    await assert.rejects(write, WriteOutcomeUnknown);
  },
);

/** `promise`, or a failure after `ms`: a write that should end at once but is sent again fails its test rather than hanging it. */
function soon<T>(promise: Promise<T>, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      timer = setTimeout(() => reject(new Error(`not settled in ${ms} ms`)), ms)
    ),
  ]).finally(() => clearTimeout(timer));
}

settledTest(
  "a first attempt that Redis runs after its fence is 503 at once: one attempt, nothing written",
  async (h) => {
    // Redis's clock, as this process reads it, a minute behind: every fence
    // given has already passed there.
    const now = Date.now();
    h.writes.observeClock(now - 60_000, now, now);
    await assert.rejects(
      soon(h.addMessage('{"n":1}')),
      (error) =>
        error instanceof StoreUnavailableError &&
        !(error instanceof CommandFailed) && /fence/.test(error.message),
    );
    assert.equal(h.attempts(), 1);
    assert.deepEqual(await h.history(), []);
    assert.deepEqual(await records(h), []);
  },
);

settledTest(
  "an error reply about the command itself ends the write at once, in doubt or not: a fault, neither 503 nor sent again",
  async (h) => {
    // The script's LPUSH meets a string: Redis answers WRONGTYPE.
    await (await sharedRedisServer()).cli("SET", h.key("history"), "a string");
    const aFault = (error: unknown) =>
      error instanceof Error && /WRONGTYPE/.test(error.message) &&
      !(error instanceof StoreUnavailableError) &&
      !(error instanceof WriteOutcomeUnknown);
    await assert.rejects(soon(h.addMessage("{}")), aFault);
    assert.equal(h.attempts(), 1);
    h.faults.push("lose-attempt");
    await assert.rejects(soon(h.addMessage("{}")), aFault);
    assert.equal(h.attempts(), 3);
  },
);

settledTest(
  "a reply no script gives is a fault, whether it comes to an attempt or reads as an allowance spent with no allowance asked",
  async (h) => {
    const run = h.redis.run;
    let reply: unknown = 42;
    h.redis.run = async (...call) => {
      await run(...call);
      return reply;
    };
    await assert.rejects(soon(h.addMessage("{}")), UnexpectedReply);
    assert.equal(h.attempts(), 1);
    reply = "limited:1000";
    await assert.rejects(soon(h.addMessage("{}")), UnexpectedReply);
    assert.equal(h.attempts(), 2);
  },
);

Deno.test("the diagram in docs/redis.md (Settling a write) is the code's SETTLING, edge for edge", async () => {
  const page = await Deno.readTextFile(
    new URL("../../../docs/redis.md", import.meta.url),
  );
  const section = page.slice(page.indexOf("### Settling a write"));
  const start = section.indexOf("```mermaid\n");
  assert.ok(start >= 0 && start < section.indexOf("\n### "), "no diagram");
  const fence = section.slice(start, section.indexOf("\n```", start + 3));
  const drawn: Record<string, Record<string, string>> = {};
  const ends = new Set<string>();
  let first: string | undefined;
  for (const line of fence.split("\n").slice(2)) {
    const edge = line.match(/^\s*(\S+) --> ([^\s:]+)\s*(?::\s*(.+))?$/);
    assert.ok(edge, `not an edge: ${line}`);
    const [, from = "", to = "", events = ""] = edge;
    if (from === "[*]") first = to;
    else if (to === "[*]") ends.add(from);
    else {
      for (const event of events.split(/,\s*/)) {
        assert.equal(drawn[from]?.[event], undefined, `${from} ${event} twice`);
        (drawn[from] ??= {})[event] = to;
      }
    }
  }
  assert.equal(first, "sent");
  assert.deepEqual(drawn, JSON.parse(JSON.stringify(SETTLING)));
  const reached = Object.values(SETTLING).flatMap((on) => Object.values(on));
  assert.deepEqual(
    ends,
    new Set(reached.filter((state) => !(state in SETTLING))),
  );
});
