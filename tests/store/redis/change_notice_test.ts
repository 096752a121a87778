/**
 * The change-notice format: what the write scripts publish (encoded in Lua
 * by `lua/notices.lua`) is what `decodeNotice` reads back, for any text, on a
 * real `redis-server`.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { decodeNotice } from "../../../src/store/redis/change_notice.ts";
import { nameProblem } from "../../../src/services/user_name.ts";
import { redisServerPath } from "../../_support/redis_server.ts";
import { sharedRedisConnection } from "../../_support/call.ts";
import { itemAt } from "../../_support/item_at.ts";

const ignore = redisServerPath() === undefined;

Deno.test({
  name:
    "every write's notice, as its script publishes it, decodes to the change it made, for any text",
  ignore,
  async fn() {
    const client = await sharedRedisConnection();
    const listener = await sharedRedisConnection();
    const prefix = `notice:${crypto.randomUUID()}:`;
    const channel = `${prefix}changes`;
    const heard: string[] = [];
    await listener.subscribe(channel, (message) => heard.push(message));
    let number = 0;
    /** Runs `script` as a settled write would, and answers the notice it published. */
    /** Runs `run` and answers the one notice it published. */
    const noticeOf = async (run: () => Promise<unknown>) => {
      const before = heard.length;
      await run();
      for (let i = 0; i < 100 && heard.length === before; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(heard.length, before + 1);
      return decodeNotice(itemAt(heard, before));
    };
    /** Runs `script` as a settled write would, and answers the notice it published. */
    const publish = (
      script: "register" | "remove" | "addMessage" | "setQuote",
      keys: string[],
      args: string[],
    ) =>
      noticeOf(() =>
        client.run(script, [`${prefix}writes`, ...keys], [
          String(number++),
          String(Date.now() + 60_000),
          "0",
          ...args,
        ])
      );
    const k = (name: string) => `${prefix}${name}`;
    try {
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: "grapheme" }), async (text) => {
          assert.deepEqual(
            await publish("setQuote", [k("quote"), channel], [text]),
            { kind: "quote", quote: text },
          );
          const message = JSON.stringify({ text });
          const stored = await publish(
            "addMessage",
            [k("history"), k("history:sequence"), channel],
            [message, "5", "0"],
          );
          assert.equal(stored?.kind, "message");
          assert.deepEqual(stored, {
            kind: "message",
            id: stored.kind === "message" ? stored.id : 0,
            json: message,
          });
          assert.deepEqual(
            await publish(
              "register",
              [
                k("users"),
                k("order"),
                k("sequence"),
                channel,
                k("touched"),
                k("looks"),
              ],
              [text, "token", "1000", `look of ${text}`],
            ),
            { kind: "registered" },
          );
          if (nameProblem(text) === null) {
            // A registered name's holds, as one process takes and drops them.
            const presence = (enter: string[], leave: string[]) =>
              noticeOf(() =>
                client.run("presence", [
                  k("processes"),
                  k("held"),
                  k("touched"),
                  k("users"),
                  channel,
                ], [
                  "p1",
                  "60000",
                  "change",
                  String(enter.length),
                  ...enter,
                  ...leave,
                ])
              );
            assert.deepEqual(await presence([text], []), {
              kind: "presence",
              name: text,
              online: true,
            });
            assert.deepEqual(await presence([], [text]), {
              kind: "presence",
              name: text,
              online: false,
            });
          }
          assert.deepEqual(
            await publish(
              "remove",
              [
                k("users"),
                k("order"),
                channel,
                k("touched"),
                k("held"),
                k("looks"),
              ],
              [text, "token"],
            ),
            { kind: "unregistered", name: text },
          );
        }),
        { numRuns: 60 },
      );
    } finally {
      await Promise.all([client.close(), listener.close()]);
    }
  },
});

Deno.test("a message notice's id is a whole number: anything else is no notice", () => {
  assert.deepEqual(decodeNotice('message:12 {"a":1}'), {
    kind: "message",
    id: 12,
    json: '{"a":1}',
  });
  for (
    const text of [
      "message:1e3 {}",
      "message:-1 {}",
      "message:0 {}",
      "message:12{}",
      "message: {}",
      "message:99999999999999999 {}",
      "other:thing",
      "users:",
      "",
    ]
  ) {
    assert.equal(decodeNotice(text), undefined, text);
  }
});
