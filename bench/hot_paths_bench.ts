/**
 * `deno task bench:micro`: the hot paths one at a time, without sockets, to
 * guide the optimisation work the HTTP benchmark measures end to end.
 * @module
 */

import { createHandler } from "../src/program/app.ts";
import { createAuthenticator } from "../src/auth/guesses.ts";
import { MemoryStore } from "../src/store/memory_store.ts";
import { checkMessage } from "../src/services/message_check.ts";
import { pathOf } from "../src/http/request_path.ts";
import { tokenDigest } from "../src/identity/token_digest.ts";

const store = new MemoryStore({ maxUsers: 100_000_000 });
const handler = createHandler({ store });
const authenticator = createAuthenticator({
  store,
  rate: undefined,
  clientOf: () => "127.0.0.1",
});
const token = "a".repeat(40);
// The store holds digests: a clear token would make every call a 401.
store.registerUser("bench", tokenDigest(token));
for (let i = 0; i < 5; i++) {
  store.addMessage(
    JSON.stringify({ text: `m${i}`, color: "black", user: "bench" }),
  );
}
for (let i = 0; i < 1000; i++) {
  store.registerUser(`user${i}`, tokenDigest(token));
}

const BASE = "http://127.0.0.1:8000";
const auth = { "x-messaging-token": `bench-${token}` };
const message = '{"text":"Hello, bench!","color":"red"}';
// A refusal is cheaper than the path measured: any is a broken bench.
const drain = async (res: Response | Promise<Response>) => {
  const r = await res;
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`answered ${r.status}, not 200`);
};

Deno.bench("routing: pathOf", { group: "routing" }, () => {
  pathOf("http://127.0.0.1:8000/users?x=1", "127.0.0.1:8000");
});

Deno.bench("auth: authenticate", { group: "auth" }, async () => {
  const req = new Request(`${BASE}/users`, { headers: auth });
  const user = await authenticator.authenticate(req);
  if (user === null) throw new Error("the bench's token did not authenticate");
});

Deno.bench("validation: checkMessage", { group: "validation" }, () => {
  checkMessage(message, "bench");
});

Deno.bench("GET / (5 messages)", { group: "handler" }, async () => {
  await drain(handler(new Request(`${BASE}/`)));
});

Deno.bench("GET /quote", { group: "handler" }, async () => {
  await drain(handler(new Request(`${BASE}/quote`)));
});

Deno.bench("GET /users (1,000 users)", { group: "handler" }, async () => {
  await drain(handler(new Request(`${BASE}/users`, { headers: auth })));
});

Deno.bench("POST / (a message)", { group: "handler" }, async () => {
  await drain(
    handler(
      new Request(`${BASE}/`, { method: "POST", headers: auth, body: message }),
    ),
  );
});

let n = 0;
Deno.bench("POST /users (register)", { group: "handler" }, async () => {
  await drain(
    handler(new Request(`${BASE}/users`, { method: "POST", body: `u${n++}` })),
  );
});

Deno.bench("POST /quote", { group: "handler" }, async () => {
  await drain(
    handler(
      new Request(`${BASE}/quote`, {
        method: "POST",
        body: "Benchmarks never lie?",
      }),
    ),
  );
});
