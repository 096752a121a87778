/**
 * Event streams over Redis when Redis misbehaves: real processes on one
 * real `redis-server`, its subscription connections cut and kept from
 * coming back, its data flushed. A stream either delivers every message
 * once, in id order, or tells its reader (a `gap`, an end, a 503).
 */

import assert from "node:assert/strict";
import { postMessage, register } from "../_support/over_http.ts";
import { readEvents } from "../_support/event_reader.ts";
import { redisServerPath, startRedis } from "../_support/redis_server.ts";
import { startServer } from "../_support/program.ts";
import { connectAdmin } from "../_support/redis_admin.ts";
import { eventually, withCluster } from "../_support/cluster.ts";
import { itemAt } from "../_support/item_at.ts";
import { openSocket, rawUpgrade } from "../_support/socket_reader.ts";

const ignore = redisServerPath() === undefined;

type Msg = { text: string };

/** Opens `GET /events`, resuming after `lastId` when given. */
function openEvents(url: string, lastId?: number) {
  return fetch(`${url}events`, {
    headers: lastId === undefined ? {} : { "last-event-id": String(lastId) },
    signal: AbortSignal.timeout(10_000),
  });
}

Deno.test({
  name:
    "while its subscription cannot come back (Redis at maxclients), a process ends its sockets (1012), opens no stream or socket and is not ready; once it is back, readers of both transports catch up on every message",
  ignore,
  async fn() {
    await withCluster(2, [], async ([a, b], redis) => {
      const token = await register(a.url, "ann");
      for (let i = 1; i <= 3; i++) await postMessage(a.url, token, `m${i}`);
      const admin = await connectAdmin(redis.port);
      try {
        const clients = String(await admin.command("CLIENT", "LIST"))
          .trim().split("\n");
        const subscribers = clients.filter((c) => / flags=P /.test(c));
        assert.equal(subscribers.length, 2, clients.join("\n"));
        // No room for the subscriptions once they are cut.
        await admin.command(
          "CONFIG",
          "SET",
          "maxclients",
          String(clients.length - subscribers.length),
        );
        const sockets = await Promise.all(
          ["events", "quote/events"].map((path) =>
            openSocket(`${b.url}${path}`)
          ),
        );
        for (const socket of sockets) await socket.frames(1);
        await admin.command("CLIENT", "KILL", "TYPE", "pubsub");
        await eventually(() =>
          Promise.resolve(/\(changes\): connection lost/.test(b.stderr()))
        );
        // Ended, so that their readers reconnect and catch up.
        for (const socket of sockets) assert.equal(await socket.closed(), 1012);
        // Ids 4 to 6, stored through the other process's command connection.
        for (let i = 4; i <= 6; i++) await postMessage(a.url, token, `m${i}`);
        for (const path of ["events", "quote/events"]) {
          const refused = await fetch(`${b.url}${path}`, {
            headers: { "last-event-id": "3" },
          });
          assert.equal(refused.status, 503, path);
          assert.ok(Number(refused.headers.get("retry-after")) >= 1, path);
          const body = await refused.json();
          assert.equal(body.status, "error");
          assert.equal(body.errors[0].location, "url");
          assert.equal(body.errors[0].name, "events");
          const upgrade = await rawUpgrade(`${b.url}${path}?lastEventId=3`);
          upgrade.conn.close();
          assert.equal(upgrade.status, 503, path);
          assert.match(upgrade.head, /retry-after: [1-9]/i);
        }
        const ready = await fetch(`${b.url}readyz`);
        assert.equal(ready.status, 503);
        await ready.body?.cancel();
        await admin.command("CONFIG", "SET", "maxclients", "10000");
      } finally {
        admin.close();
      }
      await eventually(async () => {
        const res = await fetch(`${b.url}readyz`);
        await res.body?.cancel();
        return res.status === 200;
      });
      const resumed = await openEvents(b.url, 3);
      assert.equal(resumed.status, 200);
      const reader = readEvents(resumed.body!);
      const events = await reader.events(3);
      assert.deepEqual(events.map((e) => e.id), ["4", "5", "6"]);
      assert.deepEqual(
        events.map((e) => JSON.parse(e.data).text),
        ["m4", "m5", "m6"],
      );
      await reader.close();
      const socket = await openSocket(`${b.url}events?lastEventId=3`);
      assert.deepEqual(
        (await socket.frames(3)).map((f) => [f.id, (f.data as Msg).text]),
        [[4, "m4"], [5, "m5"], [6, "m6"]],
      );
      socket.close();
    });
  },
});

Deno.test({
  name:
    "after Redis is flushed, a reader resuming with an id from before gets every message stored since (ids go on, they do not start again)",
  ignore,
  async fn() {
    await withCluster(2, [], async ([a, b], redis) => {
      const before = await register(a.url, "ann");
      for (let i = 1; i <= 5; i++) await postMessage(a.url, before, `old${i}`);
      const reader = readEvents((await openEvents(b.url)).body!);
      const seen = await reader.events(5);
      const lastId = Number(seen.at(-1)!.id);
      assert.equal(lastId, 5);
      assert.equal(await redis.cli("FLUSHALL"), "OK");
      // The flush is noticed within the store's check, and its streams end.
      let item;
      do item = await reader.next(5000); while (item !== null);
      // The users went with the flush: register again, on each process.
      const ann = await register(a.url, "ann");
      const bo = await register(b.url, "bo");
      for (let i = 1; i <= 7; i++) {
        await postMessage(i % 2 ? b.url : a.url, i % 2 ? bo : ann, `new${i}`);
      }
      for (const server of [a, b]) {
        const resumed = await openEvents(server.url, lastId);
        assert.equal(resumed.status, 200);
        const events = readEvents(resumed.body!);
        const got = await events.events(7);
        assert.deepEqual(
          got.map((e) => JSON.parse(e.data).text),
          ["new1", "new2", "new3", "new4", "new5", "new6", "new7"],
        );
        const ids = got.map((e) => Number(e.id));
        const firstId = itemAt(ids, 0);
        assert.ok(firstId > lastId, `ids ${ids}`);
        assert.deepEqual(ids, ids.map((_, i) => firstId + i));
        await events.close();
      }
    });
  },
});

Deno.test({
  name:
    "after Redis is flushed, ids go on above the old ones even when the first new message comes from a process started since, which never saw them",
  ignore,
  async fn() {
    await withCluster(1, [], async ([a], redis, start) => {
      const token = await register(a.url, "ann");
      for (let i = 1; i <= 5; i++) await postMessage(a.url, token, `old${i}`);
      const reader = readEvents((await openEvents(a.url)).body!);
      await reader.events(5);
      assert.equal(await redis.cli("FLUSHALL"), "OK");
      // A noticed the flush (its streams end), and put the sequence back.
      let item;
      do item = await reader.next(5000); while (item !== null);
      const b = await start();
      const fresh = await register(b.url, "bo");
      for (let i = 1; i <= 7; i++) await postMessage(b.url, fresh, `new${i}`);
      const resumed = readEvents((await openEvents(b.url, 5)).body!);
      const got = await resumed.events(7);
      assert.deepEqual(
        got.map((e) => JSON.parse(e.data).text),
        ["new1", "new2", "new3", "new4", "new5", "new6", "new7"],
      );
      assert.deepEqual(got.map((e) => Number(e.id)), [6, 7, 8, 9, 10, 11, 12]);
      await resumed.close();
    });
  },
});

Deno.test({
  name:
    "after Redis restarts from a snapshot older than its last writes, a reader resuming from before them is told how many it missed, then gets what is new",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir();
    const redis = await startRedis({ snapshotDir: dir });
    const server = await startServer([`--store=${redis.url}`, "--quiet"]);
    try {
      const token = await register(server.url, "ann");
      await postMessage(server.url, token, "kept");
      assert.equal(await redis.cli("SAVE"), "OK");
      for (const text of ["lost1", "lost2", "lost3"]) {
        await postMessage(server.url, token, text);
      }
      await redis.kill();
      await redis.restart();
      // The program reconnects; the snapshot knows ann and message 1 only.
      await eventually(async () =>
        (await fetch(`${server.url}readyz`)).status === 200
      );
      await eventually(async () => {
        const res = await fetch(server.url, {
          method: "POST",
          headers: { "x-messaging-token": token },
          body: JSON.stringify({ text: "new" }),
        });
        await res.body?.cancel();
        return res.status === 200;
      });
      for (const [lastId, missed] of [[1, 3], [2, 2], [4, 0]] as const) {
        const events = readEvents((await openEvents(server.url, lastId)).body!);
        const got = await events.events(missed > 0 ? 2 : 1);
        assert.deepEqual(
          got.map((
            e,
          ) => [e.event, JSON.parse(e.data).missed ?? JSON.parse(e.data).text]),
          [...(missed > 0 ? [["gap", missed]] : []), ["message", "new"]],
          `resuming from ${lastId}`,
        );
        assert.equal(got.at(-1)!.id, "5");
        await events.close();
      }
    } finally {
      await server.stop();
      await redis.kill();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
