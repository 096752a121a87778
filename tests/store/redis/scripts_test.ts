/**
 * The Lua scripts on a real `redis-server`, called as the store calls them:
 * a write recorded under its number runs once however often it is sent, an
 * attempt past its fence does nothing, a refusal of the rate limit is
 * recorded like any result, the message sequence never goes below the
 * floor it is given, and the catch-up reads only what is above the
 * reader's id.
 */

import assert from "node:assert/strict";
import type { RedisConnection } from "../../../src/store/redis/redis_connection.ts";
import { LATE } from "../../../src/store/redis/scripts.ts";
import { redisServerPath } from "../../_support/redis_server.ts";
import {
  sharedRedisConnection,
  sharedRedisServer,
} from "../../_support/call.ts";

const ignore = redisServerPath() === undefined;

/** Runs `fn` with a connection and a key prefix of its own. */
function scriptTest(
  name: string,
  fn: (redis: RedisConnection, key: (name: string) => string) => Promise<void>,
) {
  Deno.test({
    name,
    ignore,
    async fn() {
      const redis = await sharedRedisConnection();
      const prefix = `scripts:${crypto.randomUUID()}:`;
      try {
        await fn(redis, (name) => prefix + name);
      } finally {
        await redis.close();
      }
    },
  });
}

const inAMinute = () => String(Date.now() + 60_000);

scriptTest(
  "a write sent twice under one number runs once, and both attempts answer its result",
  async (redis, key) => {
    const keys = [key("writes"), key("history"), key("seq"), key("changes")];
    const attempt = ["7", inAMinute(), "0", '{"text":"once"}', "100", "0"];
    assert.equal(await redis.run("addMessage", keys, attempt), "1");
    assert.equal(await redis.run("addMessage", keys, attempt), "1");
    assert.deepEqual(await redis.lRange(key("history"), 0, -1), [
      '1 {"text":"once"}',
    ]);
    // Another number is another write.
    assert.equal(
      await redis.run("addMessage", keys, [
        "8",
        inAMinute(),
        "0",
        "{}",
        "100",
        "0",
      ]),
      "2",
    );
  },
);

scriptTest(
  "an attempt past its fence does nothing and answers late, unless an attempt before it ran: then it answers that result",
  async (redis, key) => {
    const keys = [
      key("writes"),
      key("users"),
      key("order"),
      key("seq"),
      key("changes"),
      key("touched"),
      key("looks"),
    ];
    const past = String(Date.now() - 1000);
    assert.equal(
      await redis.run("register", keys, [
        "1",
        past,
        "0",
        "ann",
        "t1",
        "10",
        "ann",
      ]),
      LATE,
    );
    assert.equal(await redis.hGet(key("users"), "ann"), null);
    assert.equal(
      await redis.run("register", keys, [
        "2",
        inAMinute(),
        "0",
        "ann",
        "t2",
        "10",
        "ann",
      ]),
      "registered",
    );
    // Its reply lost, it is sent again after its fence: it ran, and says so.
    assert.equal(
      await redis.run("register", keys, [
        "2",
        past,
        "0",
        "ann",
        "t2",
        "10",
        "ann",
      ]),
      "registered",
    );
    assert.equal(await redis.hGet(key("users"), "ann"), "t2");
    assert.equal(
      await redis.run("register", keys, [
        "3",
        inAMinute(),
        "0",
        "ann",
        "t3",
        "10",
        "ann",
      ]),
      "exists",
    );
  },
);

scriptTest(
  "the records expire when the write asks for it, so a dead process leaves nothing for good",
  async (redis, key) => {
    const quote = (number: string, expiry: string) =>
      redis.run("setQuote", [key("writes"), key("quote"), key("changes")], [
        number,
        inAMinute(),
        expiry,
        "Hi.",
      ]);
    const server = await sharedRedisServer();
    await quote("1", "0");
    assert.equal(await server.cli("PTTL", key("writes")), "-1");
    await quote("2", "3600000");
    const pttl = Number(await server.cli("PTTL", key("writes")));
    assert.ok(pttl > 3_500_000 && pttl <= 3_600_000, `${pttl} ms`);
    await quote("3", "0");
    assert.ok(Number(await server.cli("PTTL", key("writes"))) > 3_500_000);
    assert.equal(await redis.hGet(key("writes"), "2"), "set");
  },
);

scriptTest(
  "a write refused by the rate limit changes nothing, and its refusal is what a second attempt answers",
  async (redis, key) => {
    const keys = [key("writes"), key("quote"), key("changes"), key("bucket")];
    const rate = ["60000", "1"];
    assert.equal(
      await redis.run("setQuoteLimited", keys, [
        "1",
        inAMinute(),
        "0",
        "A.",
        ...rate,
      ]),
      "set",
    );
    const refused = await redis.run("setQuoteLimited", keys, [
      "2",
      inAMinute(),
      "0",
      "B.",
      ...rate,
    ]);
    assert.match(String(refused), /^limited:\d+$/);
    assert.equal(await redis.get(key("quote")), "A.");
    assert.equal(
      await redis.run("setQuoteLimited", keys, [
        "2",
        inAMinute(),
        "0",
        "B.",
        ...rate,
      ]),
      refused,
    );
  },
);

scriptTest(
  "the message sequence goes on above the floor it is given when it is behind it or gone, and is never lowered",
  async (redis, key) => {
    const keys = [key("writes"), key("history"), key("seq"), key("changes")];
    const add = (number: number, floor: number) =>
      redis.run("addMessage", keys, [
        String(number),
        inAMinute(),
        "0",
        "{}",
        "100",
        String(floor),
      ]);
    assert.equal(await add(1, 41), "42");
    assert.equal(await add(2, 0), "43");
    assert.equal(await add(3, 10), "44");
    assert.equal(await redis.get(key("seq")), "44");
  },
);

scriptTest(
  "raiseSequence puts a lost or lower sequence back up to the floor, and never lowers it",
  async (redis, key) => {
    const raise = (floor: number) =>
      redis.run("raiseSequence", [key("seq")], [String(floor)]);
    await raise(10);
    assert.equal(await redis.get(key("seq")), "10");
    await raise(4);
    assert.equal(await redis.get(key("seq")), "10");
    await raise(12);
    assert.equal(await redis.get(key("seq")), "12");
  },
);

scriptTest(
  "recent answers only the entries above the reader's id, at most the limit, and for a reader up to date nothing but the newest id",
  async (redis, key) => {
    const keys = [key("history"), key("seq")];
    assert.deepEqual(await redis.run("recent", keys, ["0", "5"]), [0, 0]);
    for (let i = 1; i <= 8; i++) {
      await redis.run(
        "addMessage",
        [key("writes"), key("history"), key("seq"), key("changes")],
        [String(i), inAMinute(), "0", `{"i":${i}}`, "6", "0"],
      );
    }
    // Ids 3 to 8 retained.
    assert.deepEqual(await redis.run("recent", keys, ["8", "6"]), [8, 0]);
    assert.deepEqual(await redis.run("recent", keys, ["6", "6"]), [
      8,
      3,
      '8 {"i":8}',
      '7 {"i":7}',
    ]);
    assert.deepEqual(await redis.run("recent", keys, ["0", "2"]), [
      8,
      3,
      '8 {"i":8}',
      '7 {"i":7}',
    ]);
    assert.deepEqual(
      (await redis.run("recent", keys, ["1", "100"]) as unknown[]).length,
      2 + 6,
    );
  },
);

scriptTest(
  "check answers Redis's clock, the generation key and the sequence, in one step",
  async (redis, key) => {
    const before = Date.now();
    const [seconds, micros, generation, sequence] = await redis.run("check", [
      key("generation"),
      key("seq"),
    ], []) as [string, string, string | null, string | null];
    const redisNow = Number(seconds) * 1000 + Number(micros) / 1000;
    assert.ok(Math.abs(redisNow - before) < 5_000);
    assert.equal(generation, null);
    assert.equal(sequence, null);
    await redis.setIfAbsent(key("generation"), "g1");
    const again = await redis.run("check", [key("generation"), key("seq")], []);
    assert.equal((again as unknown[])[2], "g1");
  },
);

scriptTest(
  "older finds a page's start in a history whose ids once jumped, as it does in a consecutive one",
  async (redis, key) => {
    const server = await sharedRedisServer();
    const messages = key("history");
    // Consecutive runs with jumps between them, as after a raised sequence.
    const ids = [1, 2, 3, 10, 11, 20, 21, 22, 23, 40];
    await server.cli("LPUSH", messages, ...ids.map((id) => `${id} {}`));
    const newestFirst = ids.toReversed();
    for (let before = 0; before <= 42; before++) {
      for (const limit of [1, 2, 3, 20]) {
        const below = newestFirst.filter((id) => id < before);
        const expected = below.slice(0, limit + 1).map((id) => `${id} {}`);
        assert.deepEqual(
          await redis.run("older", [messages], [String(before), String(limit)]),
          expected,
          `before ${before}, limit ${limit}`,
        );
      }
    }
    assert.deepEqual(await redis.run("older", [key("none")], ["5", "5"]), []);
  },
);
