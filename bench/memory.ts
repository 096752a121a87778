/**
 * `deno task bench:memory`: does memory stay flat? Posts 200,000 messages and
 * registers 50,000 users over HTTP to the real program (quiet, then logging)
 * and then to the two peers (`bench/peers/`), reporting each one's RSS idle,
 * primed, along the way and at the end; then what idle memory is made of,
 * from Deno's HTTP stack alone up to the program; then measures, in this
 * process with forced GC, what one registered user costs on the heap.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { median } from "./median.ts";
import { statusMb } from "./proc.ts";
import { MemoryStore } from "../src/store/memory_store.ts";
import { type RunningServer, startServer } from "../tests/_support/program.ts";

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

/** The RSS of `pid` once 200 ms have let the last requests' work settle. */
async function settledRssMb(pid: number): Promise<number> {
  await new Promise((r) => setTimeout(r, 200));
  return statusMb(pid, "VmRSS");
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

interface Point {
  label: string;
  mb: number;
}

/** Drives one server through the same posts and registrations, reading its RSS along the way. */
async function measure(server: RunningServer): Promise<Point[]> {
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
  const points: Point[] = [];
  const mark = async (label: string) => {
    points.push({ label, mb: await settledRssMb(pid) });
  };
  try {
    await mark("idle");
    await send(0, 1000, post);
    await send(0, 1000, register);
    await mark("primed: 1,000 messages and 1,000 users");
    // Marks along the way show whether memory plateaus or keeps climbing.
    const step = Math.max(1000, Math.floor(MESSAGES / 4));
    for (let from = 1000; from < MESSAGES; from += step) {
      const to = Math.min(MESSAGES, from + step);
      await send(from, to, post);
      await mark(`${to.toLocaleString("en-US")} messages`);
    }
    await send(1000, USERS, register);
    await mark(`${USERS.toLocaleString("en-US")} users`);
  } finally {
    await server.stop();
  }
  return points;
}

const peer = (name: string) =>
  new URL(`./peers/${name}.ts`, import.meta.url).pathname;
// The program as `deno task start` runs it logs every request: its log is
// measured too, written to /dev/null as in `deno task bench`.
const program = (logged: boolean) => () =>
  startServer(
    [
      ...(logged ? [] : ["--quiet"]),
      "--max-users=10000000",
      ...(flags.store ? [`--store=${flags.store}`] : []),
    ],
    {},
    {
      denoFlags: flags["v8-flags"] ? [`--v8-flags=${flags["v8-flags"]}`] : [],
      discardStderr: logged,
    },
  );
const plain = () => startServer([], {}, { entry: peer("plain") });
const servers: [string, () => Promise<RunningServer>][] = [
  ["program", program(false)],
  ["program, logged", program(true)],
  ["plain", plain],
  ["hono", () => startServer([], {}, { entry: peer("hono") })],
];
const results = new Map<string, Point[]>();
for (const [name, start] of servers) {
  results.set(name, await measure(await start()));
}

const names = [...results.keys()];
const labels = results.get("program")!.map((p) => p.label);
/** The RSS of server `n` at point `i` (negative: from the end); NaN if it has none there. */
const mbAt = (n: string, i: number) => results.get(n)?.at(i)?.mb ?? NaN;
console.log(`| RSS MB | ${names.join(" | ")} |`);
console.log(`|---|${names.map(() => "--:").join("|")}|`);
for (const [i, label] of labels.entries()) {
  console.log(
    `| ${label} | ${names.map((n) => mbAt(n, i).toFixed(1)).join(" | ")} |`,
  );
}
// The growth while messages are posted: from primed to the last message mark.
const growth = (n: string) => mbAt(n, -2) - mbAt(n, 1);
console.log(
  `| growth, 1,000 to ${MESSAGES.toLocaleString("en-US")} messages | ${
    names.map((n) => growth(n).toFixed(1)).join(" | ")
  } |`,
);
console.log(
  `\nAgainst plain: idle ${
    (mbAt("program", 0) - mbAt("plain", 0)).toFixed(1)
  } MB, primed ${
    (mbAt("program", 1) - mbAt("plain", 1)).toFixed(1)
  } MB (targets: within 5), growth ${
    (growth("program") - growth("plain")).toFixed(1)
  } MB, logged ${
    (growth("program, logged") - growth("plain")).toFixed(1)
  } MB (target: within 10)`,
);

// Idle memory, layer by layer. One start varies by a megabyte or so, so each
// is the median of several, the servers taking turns.
const IDLE_STARTS = 5;
const ceiling = new URL("./ceiling.ts", import.meta.url).pathname;
const layers: [string, () => Promise<RunningServer>][] = [
  [
    "`Deno.serve` answering a constant",
    () => startServer([], {}, { entry: ceiling }),
  ],
  [
    "the same, loading the program's `node:` modules",
    () => startServer(["--node"], {}, { entry: ceiling }),
  ],
  ["plain", plain],
  ["program", program(false)],
];
const idle = new Map<string, number[]>(layers.map(([name]) => [name, []]));
for (let i = 0; i < IDLE_STARTS; i++) {
  for (const [name, start] of layers) {
    const server = await start();
    idle.get(name)!.push(await settledRssMb(server.process.pid));
    await server.stop();
  }
}
console.log(
  `\n| idle RSS MB, median of ${IDLE_STARTS} starts | median | range |`,
);
console.log("|---|--:|--:|");
for (const [name, mbs] of idle) {
  console.log(
    `| ${name} | ${median(mbs).toFixed(1)} | ${Math.min(...mbs).toFixed(1)}–${
      Math.max(...mbs).toFixed(1)
    } |`,
  );
}

// Heap cost of a user in the memory store, net of the name string itself.
const gc = (globalThis as { gc?: () => void }).gc;
if (gc) {
  const users = Array.from({ length: USERS }, (_, i) => ({
    name: `member${i}`,
    token: crypto.getRandomValues(new Uint8Array(20)).toHex(),
  }));
  const store = new MemoryStore({ maxUsers: USERS });
  gc();
  const before = Deno.memoryUsage().heapUsed;
  for (const { name, token } of users) store.registerUser(name, token);
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
