/**
 * `deno task bench:memory`: does memory stay flat? Posts 200,000 messages and
 * registers 50,000 users to the real program over HTTP, reporting its RSS at
 * the start, after the first 1,000 of each, and at the end; then measures,
 * in this process with forced GC, what one registered user costs on the heap.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { MemoryStore } from "../src/store/memory_store.ts";
import { startServer } from "../tests/_support/program.ts";

const flags = flagsOf(
  {
    messages: { type: "string", default: "200000" },
    users: { type: "string", default: "50000" },
    concurrency: { type: "string", default: "64" },
    store: { type: "string" },
    "v8-flags": { type: "string" },
  },
  `Usage: deno task bench:memory [flags]
  --messages=N      messages to post (default 200000)
  --users=N         users to register (default 50000)
  --concurrency=N   requests in flight at once (default 64)
  --store=S         the program's --store (default memory)
  --v8-flags=F      V8 flags for the program, such as --max-old-space-size=64`,
);
for (const name of ["messages", "users", "concurrency"] as const) {
  if (!/^[1-9]\d{0,8}$/.test(flags[name])) {
    usageError(
      `--${name} must be a whole number of at least 1 (got "${flags[name]}")`,
    );
  }
}
const MESSAGES = Number(flags.messages);
const USERS = Number(flags.users);
const CONCURRENCY = Number(flags.concurrency);

function rssMb(pid: number): number {
  const out = new Deno.Command("cat", { args: [`/proc/${pid}/status`] })
    .outputSync();
  const kb = new TextDecoder().decode(out.stdout).match(/VmRSS:\s+(\d+)/)?.[1];
  return Number(kb) / 1024;
}

/** Sends `count` requests made by `make(i)`, `CONCURRENCY` at a time; every one must be 200. */
async function send(
  from: number,
  to: number,
  make: (i: number) => Request,
): Promise<void> {
  let next = from;
  const worker = async () => {
    while (next < to) {
      const res = await fetch(make(next++));
      if (res.status !== 200) {
        throw new Error(`status ${res.status}: ${await res.text()}`);
      }
      await res.body?.cancel();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

const server = await startServer(
  [
    "--quiet",
    "--max-users=10000000",
    ...(flags.store ? [`--store=${flags.store}`] : []),
  ],
  {},
  {
    denoFlags: flags["v8-flags"] ? [`--v8-flags=${flags["v8-flags"]}`] : [],
  },
);
const pid = server.process.pid;
const url = server.url;
const reg = await fetch(`${url}users`, { method: "POST", body: "poster" });
const token = (await reg.json()).token;
const post = (i: number) =>
  new Request(url, {
    method: "POST",
    headers: { "x-messaging-token": token },
    body: JSON.stringify({
      text: `Message number ${i}, padded to a typical length.`,
    }),
  });
const register = (i: number) =>
  new Request(`${url}users`, { method: "POST", body: `member${i}` });

const rows: [string, number][] = [];
const mark = async (label: string) => {
  await new Promise((r) => setTimeout(r, 200));
  rows.push([label, rssMb(pid)]);
};
try {
  await mark("start");
  await send(0, 1000, post);
  await send(0, 1000, register);
  await mark("after 1,000 messages and 1,000 users");
  // Marks along the way show whether memory plateaus or keeps climbing.
  const step = Math.max(1000, Math.floor(MESSAGES / 4));
  for (let from = 1000; from < MESSAGES; from += step) {
    const to = Math.min(MESSAGES, from + step);
    await send(from, to, post);
    await mark(`after ${to.toLocaleString("en-US")} messages`);
  }
  await send(1000, USERS, register);
  await mark(`after ${USERS.toLocaleString("en-US")} users`);
} finally {
  await server.stop();
}

console.log("| point | RSS MB |\n|---|--:|");
for (const [label, mb] of rows) console.log(`| ${label} | ${mb.toFixed(1)} |`);
const after1k = rows[1][1];
const afterAll = rows[rows.length - 2][1];
console.log(
  `\nRSS growth from 1,000 to ${MESSAGES.toLocaleString("en-US")} messages: ${
    (afterAll - after1k).toFixed(1)
  } MB (target: within 10 MB)`,
);

// Heap cost of a user in the memory store, net of the name string itself.
const gc = (globalThis as { gc?: () => void }).gc;
if (gc) {
  const names = Array.from({ length: USERS }, (_, i) => `member${i}`);
  const tokens = names.map(() =>
    crypto.getRandomValues(new Uint8Array(20)).toHex()
  );
  const store = new MemoryStore({ maxUsers: USERS });
  gc();
  const before = Deno.memoryUsage().heapUsed;
  for (let i = 0; i < USERS; i++) store.registerUser(names[i], tokens[i]);
  store.listUsers();
  gc();
  const after = Deno.memoryUsage().heapUsed;
  // The tokens were allocated before the first reading, so add their size:
  // a 40-character one-byte string is a 16-byte header plus 40 bytes.
  const perUser = (after - before) / USERS + 56;
  console.log(
    `Heap per registered user, besides its name: ${
      perUser.toFixed(0)
    } bytes (map entry, token string, cached list slot; target: about 200)`,
  );
} else {
  console.log("(run with --v8-flags=--expose-gc to measure the heap per user)");
}
