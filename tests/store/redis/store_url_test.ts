/**
 * Reading a `redis+sentinel://` URL, and showing any store URL without its
 * password.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  isRedisUrl,
  parseSentinelUrl,
  redactUrl,
  SENTINEL_PORT,
} from "../../../src/store/redis/store_url.ts";
import { itemAt } from "../../_support/item_at.ts";

const SEED = 20261125;

const host = fc.oneof(
  fc.ipV4(),
  fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/),
);
const sentinel = fc.record({ host, port: fc.integer({ min: 1, max: 65535 }) });
const secret = fc.string({ minLength: 1, maxLength: 20 });

/** A Sentinel URL and what it says. */
const sentinelUrl = fc.record({
  sentinels: fc.array(sentinel, { minLength: 1, maxLength: 5 }),
  masterName: fc.string({ minLength: 1, maxLength: 20 }),
  database: fc.option(fc.integer({ min: 0, max: 15 }), { nil: undefined }),
  username: fc.option(secret, { nil: undefined }),
  password: fc.option(secret, { nil: undefined }),
});

/** What a Sentinel URL says. */
interface Parts {
  sentinels: { host: string; port: number }[];
  masterName: string;
  database?: number;
  username?: string;
  password?: string;
}

/** The URL of `parts`, with `password` as written (percent-encoded unless given). */
function format(
  parts: Parts,
  password = parts.password === undefined
    ? undefined
    : encodeURIComponent(parts.password),
): string {
  const user = parts.username === undefined
    ? ""
    : encodeURIComponent(parts.username);
  const userInfo = password !== undefined
    ? `${user}:${password}@`
    : user
    ? `${user}@`
    : "";
  return `redis+sentinel://${userInfo}${
    parts.sentinels.map((s) => `${s.host}:${s.port}`).join(",")
  }/${encodeURIComponent(parts.masterName)}${
    parts.database === undefined ? "" : `/${parts.database}`
  }`;
}

Deno.test("a sentinel URL is read back as it was written: every sentinel, the name, the database, the credentials", () => {
  fc.assert(
    fc.property(sentinelUrl, (parts) => {
      const address = parseSentinelUrl(format(parts));
      assert.deepEqual(address, {
        sentinels: parts.sentinels.map((s) => ({ ...s })),
        masterName: parts.masterName,
        database: parts.database ?? 0,
        ...(parts.username === undefined ? {} : { username: parts.username }),
        ...(parts.password === undefined ? {} : { password: parts.password }),
      });
      assert.ok(isRedisUrl(format(parts)));
    }),
    { seed: SEED },
  );
});

Deno.test("a sentinel's port defaults to 26379, and an IPv6 address goes in brackets", () => {
  assert.deepEqual(
    parseSentinelUrl("redis+sentinel://a,[::1]:26380/m/")?.sentinels,
    [{ host: "a", port: SENTINEL_PORT }, { host: "::1", port: 26380 }],
  );
});

Deno.test("a URL shown is the same URL with its password as ***, whatever the password", () => {
  fc.assert(
    fc.property(sentinelUrl, secret, (parts, password) => {
      const url = format({ ...parts, password });
      assert.equal(redactUrl(url), format({ ...parts, password }, "***"));
      const { host } = itemAt(parts.sentinels, 0);
      const plain = `redis://u:${encodeURIComponent(password)}@${host}:6379/0`;
      assert.ok(isRedisUrl(plain));
      assert.equal(
        redactUrl(plain),
        `redis://u:***@${host}:6379/0`,
      );
    }),
    { seed: SEED },
  );
  assert.equal(
    redactUrl("redis+sentinel://h:1/m"),
    "redis+sentinel://h:1/m",
    "nothing to hide",
  );
  assert.equal(redactUrl("redis+sentinel://:pw@"), "redis+sentinel://:***@");
});

for (
  const url of [
    "redis+sentinel://h:1",
    "redis+sentinel://h:1/",
    "redis+sentinel:///m",
    "redis+sentinel://h:0/m",
    "redis+sentinel://h:65536/m",
    "redis+sentinel://h:1,/m",
    "redis+sentinel://h:x/m",
    "redis+sentinel://h:1/m/x",
    "redis+sentinel://h:1/m/1/2",
    "redis+sentinel://h:1/%E0%A4%A",
    "redis+sentinel://u:%zz@h:1/m",
    "redis+sentinel://h h:1/m",
    "sentinel://h:1/m",
  ]
) {
  Deno.test(`not a sentinel URL: ${url}`, () => {
    assert.equal(parseSentinelUrl(url), undefined);
    assert.equal(isRedisUrl(url), false);
  });
}
