/**
 * Writes confirmed by replicas (`--redis-wait-replicas`), on a real master
 * and a real replica: a `WAIT` after a write's attempt on any connection
 * (even one answered from its record, which writes nothing) waits for the
 * replica to hold the write; a write is answered only once the replica
 * holds it; and while one waits, new writes are refused without running,
 * and `/readyz` says so.
 */

import assert from "node:assert/strict";
import { CommandGate } from "../../../src/store/redis/command_gate.ts";
import type { RedisConnection } from "../../../src/store/redis/redis_connection.ts";
import {
  SettledWrites,
  WriteOutcomeUnknown,
} from "../../../src/store/redis/settled_writes.ts";
import { StoreUnavailableError } from "../../../src/store/store.ts";
import { RedisStore } from "../../../src/store/redis/redis_store.ts";
import { createHandler } from "../../../src/program/app.ts";
import { call } from "../../_support/call.ts";
import {
  type RedisServer,
  redisServerPath,
  startRedis,
} from "../../_support/redis_server.ts";
import { itemAt } from "../../_support/item_at.ts";

const ignore = redisServerPath() === undefined;

async function connectTo(server: RedisServer): Promise<RedisConnection> {
  const { connect } = await import("../../../src/store/redis/connection.ts");
  return await connect(
    { url: server.url, connectTimeoutMs: 2000, report: () => {} },
    "test",
  );
}

/** Runs `fn` with a master and one replica of it, each started afresh. */
function replicatedTest(
  name: string,
  fn: (master: RedisServer, replica: RedisServer) => Promise<void>,
) {
  Deno.test({
    name,
    ignore,
    async fn() {
      const master = await startRedis();
      let replica: RedisServer | undefined;
      try {
        replica = await startRedis({ replicaOf: master.port });
        await fn(master, replica);
      } finally {
        replica?.resume();
        await replica?.kill();
        await master.kill();
      }
    },
  });
}

replicatedTest(
  "a WAIT after an attempt answered from its record, on a new connection, waits for the replica",
  async (master, replica) => {
    const first = await connectTo(master);
    const second = await connectTo(master);
    try {
      const keys = ["w:records", "w:history", "w:seq", "w:changes"];
      const attempt = [
        "1",
        String(Date.now() + 60_000),
        "0",
        '{"text":"hi"}',
        "100",
        "0",
      ];
      assert.equal(await first.run("addMessage", keys, attempt), "1");
      assert.equal(await first.wait(1, 2000), 1);
      replica.pause();
      // Recorded, the attempt writes nothing; Redis remembers the
      // replication offset as it stood after a connection's last command,
      // whatever it was, so the WAIT still covers the write.
      assert.equal(await second.run("addMessage", keys, attempt), "1");
      assert.equal(await second.wait(1, 200), 0);
      replica.resume();
      assert.equal(await second.wait(1, 5000), 1);
      assert.deepEqual(await second.lRange("w:history", 0, -1), [
        '1 {"text":"hi"}',
      ]);
    } finally {
      await first.close();
      await second.close();
    }
  },
);

/** Settled writes on `master` that wait for one replica, with the harness's keys. */
async function confirmedWrites(master: RedisServer) {
  const connection = await connectTo(master);
  const gate = new CommandGate(connection, {
    timeoutMs: 1000,
    maxPending: 100,
  });
  const prefix = `confirmed:${crypto.randomUUID()}:`;
  const writes = new SettledWrites(connection, gate, {
    prefix,
    timeoutMs: 1000,
    replicas: 1,
  });
  const now = Date.now();
  writes.observeClock(now, now, now);
  return {
    connection,
    addMessage: (text: string) =>
      writes.run("addMessage", {
        messages: `${prefix}history`,
        sequence: `${prefix}seq`,
        channel: `${prefix}changes`,
      }, { message: JSON.stringify({ text }), history: "100", floor: "0" }),
    async close() {
      writes.close();
      gate.close();
      await connection.close();
    },
  };
}

const settledWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(() => true, () => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), ms)),
  ]);

/** A write made while `replica` is paused, checked still unanswered after `ms`. */
async function heldWrite(
  h: Awaited<ReturnType<typeof confirmedWrites>>,
  replica: RedisServer,
  ms: number,
): Promise<{ held: Promise<string> }> {
  replica.pause();
  const held = h.addMessage("held");
  assert.equal(await settledWithin(held, ms), false);
  // In an object: awaited bare, the write would be awaited too.
  return { held };
}

replicatedTest(
  "with a replica to confirm it, a write is answered only once the replica holds it, and meanwhile new writes are 503 without running",
  async (master, replica) => {
    const h = await confirmedWrites(master);
    try {
      assert.equal(await h.addMessage("before"), "1");
      // Its WAIT times out (250 ms) and is sent again, for as long as the
      // replica does not answer: the write is not answered.
      const { held } = await heldWrite(h, replica, 1500);
      await assert.rejects(
        h.addMessage("refused"),
        (error) =>
          error instanceof StoreUnavailableError &&
          /replicas have not confirmed/.test(error.message),
      );
      replica.resume();
      assert.equal(await held, "2");
      assert.equal(await h.addMessage("after"), "3");
      const texts = (await master.cli("KEYS", "confirmed:*history")).split(
        "\n",
      );
      assert.equal(texts.length, 1);
      assert.deepEqual(
        (await replica.cli("LRANGE", itemAt(texts, 0), "0", "-1")).split("\n"),
        [
          '3 {"text":"after"}',
          '2 {"text":"held"}',
          '1 {"text":"before"}',
        ],
        "the replica holds every write answered, and the refused one is nowhere",
      );
    } finally {
      await h.close();
    }
  },
);

replicatedTest(
  "while a write waits for its replica and new writes are refused, /readyz is 503 saying so; ready again once the replica holds it",
  async (master, replica) => {
    const store = await RedisStore.connect({
      url: master.url,
      waitReplicas: 1,
      onStatus: () => {},
    });
    const handler = createHandler({ store });
    try {
      assert.equal((await call(handler, "GET", "/readyz")).status, 200);
      replica.pause();
      const held = call(handler, "POST", "/quote", { body: "Held." });
      assert.equal(await settledWithin(held, 1500), false);
      assert.equal(
        (await call(handler, "POST", "/quote", { body: "New." })).status,
        503,
        "a new write is refused",
      );
      const notReady = await call(handler, "GET", "/readyz");
      assert.equal(notReady.status, 503);
      assert.match(notReady.json.reason, /replicas have not confirmed/);
      replica.resume();
      assert.equal((await held).status, 200);
      assert.equal((await call(handler, "GET", "/readyz")).status, 200);
    } finally {
      replica.resume();
      await store.close();
    }
  },
);

replicatedTest(
  "a write whose connection is lost while its replica has not confirmed it is sent again on the next, answered from its record there, and confirmed there",
  async (master, replica) => {
    const h = await confirmedWrites(master);
    try {
      assert.equal(await h.addMessage("before"), "1");
      const { held } = await heldWrite(h, replica, 600);
      const session = h.connection.session;
      // Every connection but redis-cli's own: the store's, which comes back.
      await master.cli("CLIENT", "KILL", "TYPE", "normal");
      for (let i = 0; h.connection.session === session; i++) {
        assert.ok(i < 100, "no new connection within 5 s");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // The attempt sent again is answered from its record, but the replica
      // still holds nothing: the write waits on.
      assert.equal(await settledWithin(held, 1000), false);
      replica.resume();
      assert.equal(await held, "2");
      assert.equal(await h.addMessage("after"), "3", "new writes go again");
      const texts = (await master.cli("KEYS", "confirmed:*history")).split(
        "\n",
      );
      assert.deepEqual(
        (await replica.cli("LRANGE", itemAt(texts, 0), "0", "-1")).split("\n"),
        ['3 {"text":"after"}', '2 {"text":"held"}', '1 {"text":"before"}'],
        "the write ran once, and the replica holds it",
      );
    } finally {
      replica.resume();
      await h.close();
    }
  },
);

replicatedTest(
  "a write waiting for its replica when the store closes gives up as unknown (a fault), never as 503",
  async (master, replica) => {
    const h = await confirmedWrites(master);
    let closed: Promise<void> | undefined;
    try {
      const { held } = await heldWrite(h, replica, 600);
      closed = h.close();
      assert.equal(await settledWithin(held, 2000), true, "it ends");
      await assert.rejects(held, WriteOutcomeUnknown);
    } finally {
      replica.resume();
      await (closed ?? h.close());
    }
  },
);
