/**
 * The presence scripts on a real `redis-server`, called as the store calls
 * them, with processes that are only ids: a dead process's holds are
 * dropped by any other's beat, `set` and `retire` leave exactly what they
 * say, and forgetting removes idle offline users exactly as `remove` does.
 */

import assert from "node:assert/strict";
import { decodeNotice } from "../../../src/store/redis/change_notice.ts";
import type { RedisConnection } from "../../../src/store/redis/redis_connection.ts";
import { redisServerPath } from "../../_support/redis_server.ts";
import { sharedRedisConnection } from "../../_support/call.ts";

const ignore = redisServerPath() === undefined;

interface Keys {
  users: string;
  order: string;
  sequence: string;
  touched: string;
  processes: string;
  held: string;
  channel: string;
  looks: string;
}

/** Runs `fn` with a connection, fresh keys, and the notices heard on their channel. */
function presenceTest(
  name: string,
  fn: (
    redis: RedisConnection,
    keys: Keys,
    heard: () => Promise<unknown[]>,
  ) => Promise<void>,
) {
  Deno.test({
    name,
    ignore,
    async fn() {
      const redis = await sharedRedisConnection();
      const listener = await sharedRedisConnection();
      const prefix = `presence:${crypto.randomUUID()}:`;
      const keys: Keys = {
        users: `${prefix}users`,
        order: `${prefix}order`,
        sequence: `${prefix}sequence`,
        touched: `${prefix}touched`,
        processes: `${prefix}processes`,
        held: `${prefix}held`,
        channel: `${prefix}changes`,
        looks: `${prefix}looks`,
      };
      const notices: string[] = [];
      await listener.subscribe(keys.channel, (text) => notices.push(text));
      // Every notice published so far (delivered within 50 ms on loopback).
      const heard = async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return notices.splice(0).map(decodeNotice);
      };
      try {
        await fn(redis, keys, heard);
      } finally {
        await Promise.all([redis.close(), listener.close()]);
      }
    },
  });
}

let number = 0;
/** Registers `name` with the store's own settled script. */
async function register(redis: RedisConnection, keys: Keys, name: string) {
  const reply = await redis.run("register", [
    `${keys.users}:writes`,
    keys.users,
    keys.order,
    keys.sequence,
    keys.channel,
    keys.touched,
    keys.looks,
  ], [
    String(number++),
    String(Date.now() + 60_000),
    "0",
    name,
    "t",
    "100",
    name,
  ]);
  assert.equal(reply, "registered");
}

/** One process's `presence` script: `change` enters then leaves. */
function presence(
  redis: RedisConnection,
  keys: Keys,
  pid: string,
  lifetimeMs: number,
  mode: "change" | "set" | "retire",
  enter: string[],
  leave: string[] = [],
) {
  return redis.run("presence", [
    keys.processes,
    keys.held,
    keys.touched,
    keys.users,
    keys.channel,
  ], [pid, String(lifetimeMs), mode, String(enter.length), ...enter, ...leave]);
}

function beat(redis: RedisConnection, keys: Keys, pid: string, limit = 1000) {
  return redis.run(
    "presenceBeat",
    [keys.processes, keys.held, keys.touched, keys.channel],
    [pid, "60000", String(limit)],
  );
}

const online = (redis: RedisConnection, keys: Keys) =>
  redis.run("onlineNames", [keys.held], []);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

presenceTest(
  "a beat drops the holds of a process past its expiry, and says offline only of names no live process holds",
  async (redis, keys, heard) => {
    for (const name of ["ann", "bob"]) await register(redis, keys, name);
    await heard();
    await presence(redis, keys, "dying", 500, "change", ["ann", "bob"]);
    await presence(redis, keys, "alive", 60_000, "change", ["bob"]);
    assert.deepEqual(await heard(), [
      { kind: "presence", name: "ann", online: true },
      { kind: "presence", name: "bob", online: true },
    ]);
    // Before its expiry, the process still counts.
    assert.deepEqual(await beat(redis, keys, "alive"), [1, 0]);
    assert.deepEqual(await online(redis, keys), ["ann", "bob"]);
    await sleep(500);
    assert.deepEqual(await beat(redis, keys, "alive"), [1, 0]);
    assert.deepEqual(await heard(), [{
      kind: "presence",
      name: "ann",
      online: false,
    }]);
    assert.deepEqual(await online(redis, keys), ["bob"]);
    assert.deepEqual(await redis.zRange(keys.processes, 0, -1), ["alive"]);
    // The dead one's beat, should it come back, says its record was gone.
    assert.deepEqual(await beat(redis, keys, "dying"), [0, 0]);
  },
);

presenceTest(
  "a change from a process whose record was swept says it was gone, though it brings the record back",
  async (redis, keys, heard) => {
    for (const name of ["ann", "bob"]) await register(redis, keys, name);
    // The first change of a process finds no record: it never had one.
    assert.equal(
      await presence(redis, keys, "stalled", 500, "change", ["ann"]),
      "gone",
    );
    assert.equal(
      await presence(redis, keys, "stalled", 500, "change", [], ["nobody"]),
      "ok",
    );
    await sleep(500);
    assert.deepEqual(await beat(redis, keys, "alive"), [0, 0]);
    await heard();
    // Its next change enters bob and pushes its record on, so its next
    // beat finds it kept: only this reply tells that ann's hold is gone.
    assert.equal(
      await presence(redis, keys, "stalled", 60_000, "change", ["bob"]),
      "gone",
    );
    assert.deepEqual(await heard(), [{
      kind: "presence",
      name: "bob",
      online: true,
    }]);
    assert.deepEqual(await online(redis, keys), ["bob"]);
    assert.deepEqual(await beat(redis, keys, "stalled"), [1, 0]);
    assert.equal(
      await presence(redis, keys, "stalled", 60_000, "set", ["ann", "bob"]),
      "ok",
    );
    assert.deepEqual(await online(redis, keys), ["ann", "bob"]);
  },
);

presenceTest(
  "a dead process holding more than a beat's limit is dropped over several beats",
  async (redis, keys, heard) => {
    const names = ["a", "b", "c", "d", "e"];
    for (const name of names) await register(redis, keys, name);
    await presence(redis, keys, "dying", 10, "change", names);
    await sleep(50);
    await heard();
    assert.deepEqual(await beat(redis, keys, "alive", 2), [0, 1]);
    assert.deepEqual(await beat(redis, keys, "alive", 2), [1, 1]);
    assert.deepEqual(await beat(redis, keys, "alive", 2), [1, 0]);
    assert.deepEqual(await online(redis, keys), []);
    assert.equal((await heard()).length, 5);
    assert.deepEqual(await redis.zRange(keys.processes, 0, -1), ["alive"]);
  },
);

presenceTest(
  "set leaves a process holding exactly its names; retire leaves it none, and no record",
  async (redis, keys, heard) => {
    for (const name of ["ann", "bob", "cy"]) await register(redis, keys, name);
    await presence(redis, keys, "p", 60_000, "change", ["ann", "bob"]);
    await heard();
    // Unregistered names are never held.
    await presence(redis, keys, "p", 60_000, "set", ["bob", "cy", "nobody"]);
    assert.deepEqual(await heard(), [
      { kind: "presence", name: "cy", online: true },
      { kind: "presence", name: "ann", online: false },
    ]);
    assert.deepEqual(await online(redis, keys), ["bob", "cy"]);
    await presence(redis, keys, "p", 60_000, "retire", []);
    assert.deepEqual(await heard(), [
      { kind: "presence", name: "bob", online: false },
      { kind: "presence", name: "cy", online: false },
    ]);
    assert.deepEqual(await online(redis, keys), []);
    assert.deepEqual(await redis.zRange(keys.processes, 0, -1), []);
  },
);

presenceTest(
  "forgetIdle unregisters idle offline users as remove does, and spares online and touched ones",
  async (redis, keys, heard) => {
    for (const name of ["idle", "online", "touched"]) {
      await register(redis, keys, name);
    }
    await presence(redis, keys, "p", 60_000, "change", ["online"]);
    await sleep(100);
    await redis.run("touchUsers", [keys.touched, keys.users], [
      "touched",
      "nobody",
    ]);
    await heard();
    const forget = () =>
      redis.run("forgetIdle", [
        keys.users,
        keys.order,
        keys.touched,
        keys.held,
        keys.channel,
        keys.looks,
      ], ["80", "100"]);
    assert.equal(await forget(), 1);
    assert.deepEqual(await heard(), [{ kind: "unregistered", name: "idle" }]);
    assert.equal(await redis.hGet(keys.users, "idle"), null);
    assert.deepEqual(await redis.zRange(keys.order, 0, -1), [
      "online",
      "touched",
    ]);
    // The online user was found active; "nobody" was never added.
    assert.deepEqual(await redis.zRange(keys.touched, 0, -1), [
      "touched",
      "online",
    ]);
    await presence(redis, keys, "p", 60_000, "change", [], ["online"]);
    await sleep(100);
    assert.equal(await forget(), 2);
    assert.deepEqual(await redis.zRange(keys.order, 0, -1), []);
  },
);

presenceTest(
  "remove drops every hold on the name with it, so its next owner starts offline",
  async (redis, keys, heard) => {
    await register(redis, keys, "ann");
    await presence(redis, keys, "p1", 60_000, "change", ["ann"]);
    await presence(redis, keys, "p2", 60_000, "change", ["ann"]);
    await heard();
    const removed = await redis.run("remove", [
      `${keys.users}:writes`,
      keys.users,
      keys.order,
      keys.channel,
      keys.touched,
      keys.held,
      keys.looks,
    ], [String(number++), String(Date.now() + 60_000), "0", "ann", "t"]);
    assert.equal(removed, "removed");
    assert.deepEqual(await heard(), [{ kind: "unregistered", name: "ann" }]);
    assert.deepEqual(await redis.zRange(keys.held, 0, -1), []);
    await register(redis, keys, "ann");
    assert.deepEqual(await online(redis, keys), []);
  },
);

presenceTest(
  "a user registered by an earlier version, with no activity kept, is followed from its first touch",
  async (redis, keys) => {
    // What an earlier version's register leaves: no entry in touched.
    await redis.run("register", [
      `${keys.users}:writes`,
      keys.users,
      keys.order,
      keys.sequence,
      keys.channel,
      `${keys.touched}:elsewhere`,
      keys.looks,
    ], [
      String(number++),
      String(Date.now() + 60_000),
      "0",
      "old",
      "t",
      "100",
      "old",
    ]);
    assert.deepEqual(await redis.zRange(keys.touched, 0, -1), []);
    await redis.run("touchUsers", [keys.touched, keys.users], ["old"]);
    assert.deepEqual(await redis.zRange(keys.touched, 0, -1), ["old"]);
  },
);
