import assert from "node:assert/strict";
import { tokenDigest } from "../../src/identity/token_digest.ts";
import { createMessagingService } from "../../src/services/messaging.ts";
import type { Handler } from "../../src/http/router.ts";
import type { Store } from "../../src/store/store.ts";
import {
  call,
  chunkedBody,
  CONTENT_TYPE,
  storeTest,
} from "../_support/call.ts";

const UNAUTHORIZED = { status: 401, message: "Unauthorized" };

async function register(service: Handler, name: string): Promise<string> {
  const res = await call(service, "POST", "/users", { body: name });
  assert.equal(res.status, 200, `register ${name}: ${res.text}`);
  return res.json.token;
}

async function users(service: Handler, token: string): Promise<string[]> {
  const res = await call(service, "GET", "/users", { token });
  assert.equal(res.status, 200);
  return res.json.users;
}

async function messages(service: Handler) {
  const res = await call(service, "GET", "/");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
  return res.json;
}

function service(store: Store, maxBodyBytes?: number): Handler {
  return createMessagingService({ store, maxBodyBytes });
}

// ---- users ----

storeTest(
  "POST /users answers <name>-<40 lowercase hex>, a new token each time",
  async (store) => {
    const svc = service(store);
    const res = await call(svc, "POST", "/users", { body: "alice" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.deepEqual(Object.keys(res.json), ["token"]);
    assert.match(res.json.token, /^alice-[0-9a-f]{40}$/);
    const other = await register(svc, "bob");
    assert.notEqual(other.slice(4), res.json.token.slice(6));
  },
);

storeTest(
  "a taken name is 400 This user exists! and changes nothing",
  async (store) => {
    const svc = service(store);
    const token = await register(svc, "alice");
    const res = await call(svc, "POST", "/users", { body: "alice" });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, {
      status: "error",
      errors: [{
        location: "url",
        name: "name",
        description: "This user exists!",
      }],
    });
    assert.deepEqual(await users(svc, token), ["alice"]);
  },
);

storeTest(
  "a name typed composed or decomposed is one user, answered and listed in NFC",
  async (store) => {
    const svc = service(store);
    const composed = "caf\u00e9";
    const decomposed = "cafe\u0301";
    const token = await register(svc, decomposed);
    assert.ok(token.startsWith(`${composed}-`), token);
    const again = await call(svc, "POST", "/users", { body: composed });
    assert.equal(again.status, 400);
    assert.deepEqual(again.json.errors, [
      { location: "url", name: "name", description: "This user exists!" },
    ]);
    assert.deepEqual(await users(svc, token), [composed]);
    // A credential in either form authenticates, sent as UTF-8 bytes.
    const secret = token.slice(token.indexOf("-"));
    assert.deepEqual(await users(svc, `${decomposed}${secret}`), [composed]);
    const posted = await call(svc, "POST", "/", {
      token: `${decomposed}${secret}`,
      body: '{"text":"hi"}',
    });
    assert.equal(posted.status, 200);
    assert.equal((await messages(svc))[0].user, composed);
  },
);

storeTest(
  "a name that looks like a registered one is taken, in any script, until that one leaves",
  async (store) => {
    const svc = service(store);
    const pairs: [string, string][] = [
      ["admin", "\u0430dmin"], // Cyrillic а
      ["paypal", "p\u0430yp\u0430l"],
      ["alice", "a\u0399ice"], // Greek Ι for l
      ["bob1", "bobl"], // digit one, letter l
      ["Ωmega", "\u2126mega"], // the ohm sign is Ω under NFC
    ];
    for (const [first, alike] of pairs) {
      const token = await register(svc, first);
      const taken = await call(svc, "POST", "/users", { body: alike });
      assert.equal(taken.status, 400, `${first} / ${alike}`);
      assert.deepEqual(taken.json.errors, [
        { location: "url", name: "name", description: "This user exists!" },
      ]);
      const gone = await call(svc, "DELETE", "/users", { token });
      assert.equal(gone.status, 200);
      await register(svc, alike);
    }
    // Case still tells names apart, and unrelated scripts are apart.
    for (const name of ["Zed", "zed", "Иван", "Ivan", "李雷"]) {
      await register(svc, name);
    }
  },
);

storeTest(
  "of look-alike names registered at once, exactly one is registered",
  async (store) => {
    const svc = service(store);
    const names = ["admin", "\u0430dmin", "\u0430dm\u0456n", "adm\u0456n"];
    const answers = await Promise.all(
      names.map((body) => call(svc, "POST", "/users", { body })),
    );
    assert.deepEqual(
      answers.map((a) => a.status).sort(),
      [200, 400, 400, 400],
    );
  },
);

storeTest(
  "the store keeps a token's SHA-256 digest, never the token, and the digest does not authenticate",
  async (store) => {
    const svc = service(store);
    const token = await register(svc, "ann");
    const secret = token.slice("ann-".length);
    const stored = await store.tokenOf("ann");
    assert.notEqual(stored, secret);
    assert.equal(stored, tokenDigest(secret));
    assert.match(stored ?? "", /^[0-9a-f]{64}$/);
    // What a dump would yield is no credential.
    const res = await call(svc, "GET", "/users", { token: `ann-${stored}` });
    assert.equal(res.status, 401);
    assert.deepEqual(await users(svc, token), ["ann"]);
  },
);

storeTest("names are case-sensitive", async (store) => {
  const svc = service(store);
  const token = await register(svc, "Alice");
  await register(svc, "alice");
  assert.deepEqual(await users(svc, token), ["Alice", "alice"]);
});

const refusedNames: [string, string | Uint8Array<ArrayBuffer>, RegExp][] = [
  ["empty", "", /empty/],
  ["containing -", "a-b", /'-'/],
  ["containing NUL", "a\u0000b", /control/],
  ["containing a tab", "a\tb", /control/],
  ["containing a newline", "a\nb", /control/],
  ["containing DEL", "a\u007fb", /control/],
  ["containing the C1 control U+0085", "a\u0085b", /control.*U\+0085/],
  ["containing a line separator", "a\u2028b", /line breaks \(U\+2028\)/],
  ["carrying a header line", "a\r\nX-Injected: 1", /control.*U\+000D/],
  ["containing a right-to-left override", "a\u202eb", /U\+202E/],
  ["containing a zero-width space", "ad\u200bmin", /invisible.*U\+200B/],
  ["containing U+FFFF", "a\uffff", /noncharacters \(U\+FFFF\)/],
  ["with a leading space", " alice", /white space/],
  ["with a trailing space", "alice ", /white space/],
  ["with a trailing no-break space", "alice\u00a0", /white space/],
  ["of 65 code points", "é".repeat(65), /at most 64/],
  ["of 65 astral code points", "😀".repeat(65), /at most 64/],
  ["that is not UTF-8", new Uint8Array([0x61, 0xc3, 0x28]), /UTF-8/],
];

for (const [label, name, description] of refusedNames) {
  storeTest(
    `a name ${label} is refused with 400 and not registered`,
    async (store) => {
      const svc = service(store);
      const res = await call(svc, "POST", "/users", { body: name });
      assert.equal(res.status, 400);
      assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
      assert.equal(res.json.status, "error");
      assert.equal(res.json.errors.length, 1);
      assert.equal(res.json.errors[0].location, "body");
      assert.equal(res.json.errors[0].name, "name");
      assert.match(res.json.errors[0].description, description);
      assert.deepEqual(await users(svc, await register(svc, "witness")), [
        "witness",
      ]);
    },
  );
}

storeTest(
  "names of 64 code points, astral ones included, register and authenticate",
  async (store) => {
    const svc = service(store);
    for (const name of ["a".repeat(64), "😀".repeat(64), "in ner space"]) {
      const token = await register(svc, name);
      assert.ok((await users(svc, token)).includes(name));
    }
  },
);

storeTest(
  "a Unicode name authenticates with its header sent as UTF-8 bytes, and as ISO-8859-1 bytes",
  async (store) => {
    const svc = service(store);
    const token = await register(svc, "José");
    assert.match(token, /^José-[0-9a-f]{40}$/);
    assert.deepEqual(await users(svc, token), ["José"]);
    // What browsers' fetch, Python's requests and Node's fetch send: é as the
    // one byte 0xE9, which is not UTF-8, so it is read as ISO-8859-1.
    const latin1 = { headers: { "x-messaging-token": token } };
    const list = await call(svc, "GET", "/users", latin1);
    assert.equal(list.status, 200);
    assert.deepEqual(list.json, { users: ["José"] });
    const post = await call(svc, "POST", "/", {
      ...latin1,
      body: JSON.stringify({ text: "Olá" }),
    });
    assert.equal(post.status, 200);
    assert.equal((await call(svc, "GET", "/")).json[0].user, "José");
    const bye = await call(svc, "DELETE", "/users", latin1);
    assert.deepEqual(bye.json, { Goodbye: "José" });
  },
);

storeTest("GET /users lists names in registration order", async (store) => {
  const svc = service(store);
  const names = ["carol", "alice", "Bob", "Zoë"];
  const tokens = [];
  for (const name of names) tokens.push(await register(svc, name));
  for (const token of tokens) assert.deepEqual(await users(svc, token), names);
});

storeTest(
  "DELETE /users says Goodbye, the old credential is dead, the name is free again",
  async (store) => {
    const svc = service(store);
    const old = await register(svc, "alice");
    const witness = await register(svc, "bob");
    const res = await call(svc, "DELETE", "/users", { token: old });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.deepEqual(res.json, { Goodbye: "alice" });
    assert.deepEqual(await users(svc, witness), ["bob"]);
    for (
      const [method, path] of [
        ["GET", "/users"],
        ["DELETE", "/users"],
        ["POST", "/"],
      ] as const
    ) {
      const after = await call(svc, method, path, {
        token: old,
        body: method === "POST" ? '{"text":"x"}' : undefined,
      });
      assert.equal(after.status, 401, `${method} ${path}`);
    }
    const again = await register(svc, "alice");
    assert.notEqual(again, old);
    assert.equal(
      (await call(svc, "GET", "/users", { token: old })).status,
      401,
    );
    assert.deepEqual(await users(svc, again), ["bob", "alice"]);
  },
);

storeTest("every cause of 401 on every authenticated call", async (store) => {
  const svc = service(store);
  const alice = await register(svc, "alice");
  const bob = await register(svc, "bob");
  const aliceToken = alice.slice("alice-".length);
  const bad: [string, Record<string, string>][] = [
    ["absent header", {}],
    ["empty header", { "x-messaging-token": "" }],
    ["no dash", { "x-messaging-token": `alice${aliceToken}` }],
    ["unregistered name", { "x-messaging-token": `mallory-${aliceToken}` }],
    ["another user's token", { "x-messaging-token": `alice-${bob.slice(4)}` }],
    ["empty token", { "x-messaging-token": "alice-" }],
    ["truncated token", { "x-messaging-token": alice.slice(0, -1) }],
    ["token with extra digit", { "x-messaging-token": `${alice}0` }],
    ["uppercase token", {
      "x-messaging-token": `alice-${aliceToken.toUpperCase()}`,
    }],
    ["name not UTF-8", { "x-messaging-token": `\u00ff-${aliceToken}` }],
  ];
  for (const [label, headers] of bad) {
    for (
      const [method, path] of [
        ["GET", "/users"],
        ["DELETE", "/users"],
        ["POST", "/"],
      ] as const
    ) {
      const res = await call(svc, method, path, {
        headers,
        body: method === "POST" ? '{"text":"x"}' : undefined,
      });
      assert.equal(res.status, 401, `${label}: ${method} ${path}`);
      assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
      assert.deepEqual(res.json, UNAUTHORIZED);
    }
  }
  assert.deepEqual(await users(svc, alice), ["alice", "bob"]);
  assert.deepEqual(await messages(svc), []);
});

storeTest("authentication runs before the body is read", async (store) => {
  const svc = service(store, 1024);
  const bad = { "x-messaging-token": "nobody-0000" };
  const huge = await call(svc, "POST", "/", {
    headers: bad,
    body: chunkedBody(1 << 20),
  });
  assert.equal(huge.status, 401);
  const invalid = await call(svc, "POST", "/", {
    headers: bad,
    body: "{not json",
  });
  assert.equal(invalid.status, 401);
  assert.deepEqual(invalid.json, UNAUTHORIZED);
});

storeTest(
  "50 parallel registrations of one name: exactly one succeeds",
  async (store) => {
    const svc = service(store);
    const answers = await Promise.all(
      Array.from(
        { length: 50 },
        () => call(svc, "POST", "/users", { body: "race" }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1);
    assert.equal(statuses.filter((s) => s === 400).length, 49);
    const winner = answers.find((a) => a.status === 200)!.json.token;
    assert.deepEqual(await users(svc, winner), ["race"]);
  },
);

storeTest(
  "past the user limit POST /users is 503 with the error envelope",
  async (store) => {
    const svc = service(store);
    const first = await register(svc, "one");
    await register(svc, "two");
    const res = await call(svc, "POST", "/users", { body: "three" });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.equal(res.json.status, "error");
    assert.equal(res.json.errors[0].name, "name");
    assert.match(res.json.errors[0].description, /limit/);
    assert.deepEqual(await users(svc, first), ["one", "two"]);
    await call(svc, "DELETE", "/users", { token: first });
    await register(svc, "three");
  },
  { maxUsers: 2 },
);

// ---- messages ----

storeTest("GET / is an empty array at start", async (store) => {
  assert.deepEqual(await messages(service(store)), []);
});

storeTest(
  "POST / stores the message with color black by default and the poster as user",
  async (store) => {
    const svc = service(store);
    const token = await register(svc, "alice");
    const res = await call(svc, "POST", "/", {
      token,
      body: '{"text":"hello"}',
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.deepEqual(res.json, { status: "added" });
    assert.deepEqual(await messages(svc), [{
      text: "hello",
      color: "black",
      user: "alice",
    }]);
  },
);

storeTest(
  "POST / keeps red, replaces a posted user and keeps every other field, __proto__ included",
  async (store) => {
    const svc = service(store);
    const token = await register(svc, "alice");
    const body =
      '{"user":"mallory","text":"hi","color":"red","n":1.5,"tags":["a"],"__proto__":{"admin":true}}';
    assert.equal((await call(svc, "POST", "/", { token, body })).status, 200);
    const res = await call(svc, "GET", "/");
    assert.deepEqual(res.json, [{
      user: "alice",
      text: "hi",
      color: "red",
      n: 1.5,
      tags: ["a"],
      ["__proto__"]: { admin: true },
    }]);
    assert.ok(
      Object.hasOwn(res.json[0] ?? {}, "__proto__"),
      "__proto__ is an own data key",
    );
    assert.equal(({} as Record<string, unknown>).admin, undefined);
  },
);

const badMessages: [
  string,
  string | Uint8Array<ArrayBuffer>,
  { name: string; description: string },
][] = [
  ["not JSON", "{text:", { name: "message", description: "Not valid JSON" }],
  ["empty", "", { name: "message", description: "Not valid JSON" }],
  ["not UTF-8", new Uint8Array([0x7b, 0xff, 0x7d]), {
    name: "message",
    description: "Not valid JSON",
  }],
  ["an array", '["text"]', { name: "text", description: "Missing text" }],
  ["a string", '"text"', { name: "text", description: "Missing text" }],
  ["null", "null", { name: "text", description: "Missing text" }],
  ["a number", "42", { name: "text", description: "Missing text" }],
  ["an object without text", '{"color":"red"}', {
    name: "text",
    description: "Missing text",
  }],
  ["text inherited only", '{"__proto__":{"text":"x"}}', {
    name: "text",
    description: "Missing text",
  }],
  ["text a number", '{"text":5}', {
    name: "text",
    description: "text must be a string",
  }],
  ["text null", '{"text":null}', {
    name: "text",
    description: "text must be a string",
  }],
  ["text bad and color bad (check stops)", '{"text":5,"color":"blue"}', {
    name: "text",
    description: "text must be a string",
  }],
  ["color blue", '{"text":"x","color":"blue"}', {
    name: "color",
    description: "only red and black supported",
  }],
  ["color RED", '{"text":"x","color":"RED"}', {
    name: "color",
    description: "only red and black supported",
  }],
  ["color null", '{"text":"x","color":null}', {
    name: "color",
    description: "only red and black supported",
  }],
  ["color an array", '{"text":"x","color":["red"]}', {
    name: "color",
    description: "only red and black supported",
  }],
  [
    "nested 65 deep",
    `{"text":"x","n":${"[".repeat(64)}${"]".repeat(64)}}`,
    { name: "message", description: "Nested too deeply" },
  ],
  [
    "nested 20,000 deep",
    `{"text":"x","n":${"[".repeat(20_000)}${"]".repeat(20_000)}}`,
    { name: "message", description: "Nested too deeply" },
  ],
  [
    "holding a number of 1,001 characters",
    `{"text":"x","n":${"9".repeat(1001)}}`,
    {
      name: "message",
      description: "Number too long (at most 1000 characters)",
    },
  ],
  [
    "too deep and not JSON (not JSON first)",
    `{"text":"x","n":${"[".repeat(100)}}`,
    { name: "message", description: "Not valid JSON" },
  ],
];

storeTest(
  "numbers come back from GET / with the digits they were posted with",
  async (store) => {
    const svc = service(store);
    const token = await register(svc, "alice");
    const fields =
      '"a":1e400,"b":123456789012345678901234567890,"c":1.50,"d":-0,"e":[0.1,-2E-5],"f":{"g":7}';
    const res = await call(svc, "POST", "/", {
      token,
      body: `{"text":"x",${fields}}`,
    });
    assert.equal(res.status, 200);
    const read = await call(svc, "GET", "/");
    assert.equal(
      read.text,
      `[{"text":"x",${fields},"color":"black","user":"alice"}]`,
    );
  },
);

storeTest("a number of 1,000 characters is kept as posted", async (store) => {
  const svc = service(store);
  const token = await register(svc, "alice");
  const n = "9".repeat(1000);
  const res = await call(svc, "POST", "/", {
    token,
    body: `{"text":"x","n":${n}}`,
  });
  assert.equal(res.status, 200);
  const read = await call(svc, "GET", "/");
  assert.ok(read.text.includes(`"n":${n},`));
});

storeTest("a body nested exactly 64 deep is stored", async (store) => {
  const svc = service(store);
  const token = await register(svc, "alice");
  const deep = `${"[".repeat(63)}${"]".repeat(63)}`;
  const res = await call(svc, "POST", "/", {
    token,
    body: `{"text":"x","n":${deep}}`,
  });
  assert.equal(res.status, 200);
  assert.deepEqual((await messages(svc))[0].n.flat(Infinity), []);
});

for (const [label, body, entry] of badMessages) {
  storeTest(
    `POST / with a body that is ${label} is 400 and stores nothing`,
    async (store) => {
      const svc = service(store);
      const token = await register(svc, "alice");
      await call(svc, "POST", "/", { token, body: '{"text":"before"}' });
      const res = await call(svc, "POST", "/", { token, body });
      assert.equal(res.status, 400);
      assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
      assert.deepEqual(res.json, {
        status: "error",
        errors: [{ location: "body", ...entry }],
      });
      assert.deepEqual(
        (await messages(svc)).map((m: { text: string }) => m.text),
        ["before"],
      );
    },
  );
}

storeTest("GET / answers the 5 newest, newest first", async (store) => {
  const svc = service(store);
  const token = await register(svc, "alice");
  for (let i = 1; i <= 3; i++) {
    await call(svc, "POST", "/", {
      token,
      body: JSON.stringify({ text: `m${i}` }),
    });
  }
  assert.deepEqual((await messages(svc)).map((m: { text: string }) => m.text), [
    "m3",
    "m2",
    "m1",
  ]);
  for (let i = 4; i <= 12; i++) {
    await call(svc, "POST", "/", {
      token,
      body: JSON.stringify({ text: `m${i}` }),
    });
  }
  assert.deepEqual((await messages(svc)).map((m: { text: string }) => m.text), [
    "m12",
    "m11",
    "m10",
    "m9",
    "m8",
  ]);
});

storeTest(
  "POST / over the body limit is 413 and stores nothing",
  async (store) => {
    const svc = service(store, 64);
    const token = await register(svc, "alice");
    const body = JSON.stringify({ text: "x".repeat(100) });
    const res = await call(svc, "POST", "/", { token, body });
    assert.equal(res.status, 413);
    assert.equal(res.json.errors[0].location, "body");
    assert.equal(res.json.errors[0].name, "body");
    assert.deepEqual(await messages(svc), []);
  },
);

Deno.test("tokens stay distinct across many registrations", async () => {
  const svc = createMessagingService();
  const seen = new Set<string>();
  for (let i = 0; i < 1100; i++) {
    const token = (await register(svc, `u${i}`)).slice(`u${i}-`.length);
    assert.match(token, /^[0-9a-f]{40}$/);
    seen.add(token);
  }
  assert.equal(seen.size, 1100);
});

storeTest(
  "a user removed while their post's body is on its way cannot post, not even as the name's new owner",
  async (store) => {
    const svc = service(store);
    const old = await register(svc, "mallory");
    let finish = (_: string) => {};
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"text":'));
        finish = (rest) => {
          controller.enqueue(new TextEncoder().encode(rest));
          controller.close();
        };
      },
    });
    const posting = call(svc, "POST", "/", { token: old, body });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(
      (await call(svc, "DELETE", "/users", { token: old })).status,
      200,
    );
    await register(svc, "mallory");
    finish('"hijack"}');
    const res = await posting;
    assert.equal(res.status, 401);
    assert.deepEqual(res.json, UNAUTHORIZED);
    assert.deepEqual(await messages(svc), []);
  },
);

storeTest(
  "a post whose body stalls past the deadline is 408 and stores nothing",
  async (store) => {
    const svc = createMessagingService({ store, bodyTimeoutMs: 50 });
    const token = await register(svc, "slow");
    const stalled = new ReadableStream({ pull: () => new Promise(() => {}) });
    const res = await call(svc, "POST", "/", { token, body: stalled });
    assert.equal(res.status, 408);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.deepEqual(res.json, {
      status: "error",
      errors: [{
        location: "body",
        name: "body",
        description: "Request body did not arrive within 0.05 s",
      }],
    });
    assert.deepEqual(await messages(svc), []);
  },
);
