/**
 * Writes over Redis when Redis drops the command connection under them:
 * real processes, real `redis-server`, `CLIENT KILL` in a loop. A write
 * answered 503 has not happened and never will; one answered 200 is kept.
 */

import assert from "node:assert/strict";
import { utf8Header } from "../_support/call.ts";
import { redisServerPath } from "../_support/redis_server.ts";
import { connectAdmin } from "../_support/redis_admin.ts";
import { eventually, withCluster } from "../_support/cluster.ts";

const ignore = redisServerPath() === undefined;

/** One request's status, or 0 when the connection failed. */
async function status(url: string, init: RequestInit): Promise<number> {
  try {
    const res = await fetch(url, {
      ...init,
      signal: AbortSignal.timeout(30_000),
    });
    await res.body?.cancel();
    return res.status;
  } catch {
    return 0;
  }
}

Deno.test({
  name:
    "with the command connections killed again and again under 16 writers on two processes, no write answered 503 is stored and none answered 200 is lost",
  ignore,
  async fn() {
    await withCluster(2, ["--history=100000"], async (servers, redis) => {
      const [a, b] = servers;
      const owner = await (await fetch(`${a.url}users`, {
        method: "POST",
        body: "owner",
      })).json();
      const auth = { "x-messaging-token": utf8Header(owner.token) };
      const registered = new Map<string, number>();
      const posted = new Map<string, number>();
      const removed = new Map<string, number>();
      // Users to remove under the kills, registered before them.
      const leavers: string[][] = [];
      for (let w = 0; w < 16; w++) {
        leavers.push(
          await Promise.all(
            Array.from({ length: 60 }, async (_, k) => {
              const res = await fetch(`${a.url}users`, {
                method: "POST",
                body: `d${w}_${k}`,
              });
              return (await res.json()).token;
            }),
          ),
        );
      }
      const admin = await connectAdmin(redis.port);
      let killing = true;
      let kills = 0;
      const killer = (async () => {
        for (let i = 0; i < 400 && killing; i++) {
          await admin.command("CLIENT", "KILL", "TYPE", "normal");
          kills++;
          await new Promise((r) => setTimeout(r, 15 + (i % 4) * 10));
        }
      })();
      const started = Date.now();
      const writers = leavers.map(async (mine, w) => {
        const server = w % 2 ? b : a;
        for (let n = 0; Date.now() - started < 4000 && n < 1000; n++) {
          const token = n % 3 === 2 ? mine.pop() : undefined;
          if (token !== undefined) {
            removed.set(
              token.slice(0, token.indexOf("-")),
              await status(`${server.url}users`, {
                method: "DELETE",
                headers: { "x-messaging-token": token },
              }),
            );
          } else if (n % 3 === 0) {
            const name = `w${w}_${n}`;
            registered.set(
              name,
              await status(`${server.url}users`, {
                method: "POST",
                body: name,
              }),
            );
          } else {
            const text = `p${w}_${n}`;
            posted.set(
              text,
              await status(server.url, {
                method: "POST",
                headers: auth,
                body: JSON.stringify({ text }),
              }),
            );
          }
        }
      });
      await Promise.all(writers);
      killing = false;
      await killer;
      admin.close();
      // Once Redis is left alone, everything is readable again.
      let users: string[] = [];
      await eventually(async () => {
        const res = await fetch(`${b.url}users`, { headers: auth });
        if (res.status !== 200) {
          await res.body?.cancel();
          return false;
        }
        users = (await res.json()).users;
        return true;
      });
      const historyKey = await redis.cli("KEYS", "*history");
      const texts = (await redis.cli("LRANGE", historyKey, "0", "-1"))
        .split("\n").map((entry) => {
          const json = entry.slice(entry.indexOf(" ") + 1);
          return json.startsWith("{") ? JSON.parse(json).text : "";
        });
      const history = new Set(texts);
      // A write sent again must not be stored again.
      const duplicated = texts.length - history.size;
      const stored = new Set(users);
      const tally = (
        answers: Map<string, number>,
        has: (k: string) => boolean,
      ) => {
        const out = {
          ok: 0,
          refused: 0,
          refusedButStored: 0,
          okButLost: 0,
          other: 0,
        };
        for (const [key, code] of answers) {
          if (code === 200) {
            out.ok++;
            if (!has(key)) out.okButLost++;
          } else if (code === 503) {
            out.refused++;
            if (has(key)) out.refusedButStored++;
          } else out.other++;
        }
        return out;
      };
      const registrations = tally(registered, (name) => stored.has(name));
      const posts = tally(posted, (text) => history.has(text));
      // A removal happened when the user is gone.
      const removals = tally(removed, (name) => !stored.has(name));
      console.log({ kills, registrations, posts, removals, duplicated });
      assert.ok(kills > 20, `only ${kills} kills`);
      assert.ok(registrations.ok > 0 && posts.ok > 0);
      assert.equal(registrations.other + posts.other, 0);
      assert.equal(removals.refusedButStored, 0);
      assert.equal(removals.okButLost, 0);
      assert.equal(registrations.refusedButStored, 0);
      assert.equal(registrations.okButLost, 0);
      assert.equal(posts.refusedButStored, 0);
      assert.equal(posts.okButLost, 0);
      assert.equal(duplicated, 0);
    });
  },
});
