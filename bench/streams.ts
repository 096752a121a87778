/**
 * `deno task bench:streams`: one process holding N open event streams (a
 * separate process holds the readers): idle RSS per stream, and the time
 * from a post's answer until every reader has the event, over 200 posts,
 * for each N, on the memory store and on Redis with two processes (readers
 * split between them, posts on the first).
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { percentile } from "./median.ts";
import { statusMb } from "./proc.ts";
import { startRedis } from "../tests/_support/redis_server.ts";
import { type RunningServer, startServer } from "../tests/_support/program.ts";

const USAGE =
  `Usage: deno task bench:streams [--streams=1000,10000] [--posts=200] [--stores=memory,redis]`;

const flags = flagsOf({
  streams: { type: "string", default: "1000,10000" },
  posts: { type: "string", default: "200" },
  stores: { type: "string", default: "memory,redis" },
}, USAGE);
const counts = flags.streams.split(",").map(Number);
const posts = Number(flags.posts);
const stores = flags.stores.split(",");
if (
  counts.some((n) => !(Number.isInteger(n) && n >= 1 && n <= 18_000)) ||
  !(Number.isInteger(posts) && posts >= 1 && posts <= 10_000) ||
  stores.some((s) => s !== "memory" && s !== "redis")
) {
  usageError("bad --streams, --posts or --stores");
}

const rssMb = (pid: number) => statusMb(pid, "VmRSS");

const now = () => performance.timeOrigin + performance.now();

interface Row {
  store: string;
  streams: number;
  idleRssPerStreamKb: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  delivered: number;
}

async function measure(store: string, count: number): Promise<Row> {
  const redis = store === "redis" ? await startRedis() : undefined;
  const args = [
    "--quiet",
    `--max-streams=${count + 10}`,
    // Every reader connects from this one address.
    `--max-streams-per-client=${count + 10}`,
    ...(redis ? [`--store=${redis.url}`] : []),
  ];
  const poster = await startServer(args);
  const servers: RunningServer[] = [poster];
  if (redis) servers.push(await startServer(args));
  try {
    const token = (await (await fetch(`${poster.url}users`, {
      method: "POST",
      body: "bench",
    })).json()).token;
    const before = servers.map((s) => rssMb(s.process.pid));
    const readers = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net",
        new URL("./stream_readers.ts", import.meta.url).pathname,
        servers.map((s) => new URL(s.url).host).join(","),
        String(count),
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = readers.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { done, value } = await lines.read();
      if (done) break;
      out += value;
    }
    if (!out.startsWith("ready")) throw new Error(`readers: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = servers.map((s) => rssMb(s.process.pid));
    const total = (mbs: number[]) => mbs.reduce((sum, mb) => sum + mb, 0);
    const grown = total(after) - total(before);
    const answered = new Map<number, number>();
    // Posts far enough apart that one has reached every reader before the
    // next: each is measured alone, not queued behind the last.
    const gap = Math.max(20, count / 20);
    for (let i = 0; i < posts; i++) {
      const res = await fetch(poster.url, {
        method: "POST",
        headers: { "x-messaging-token": token },
        body: JSON.stringify({ text: `post ${i}` }),
      });
      answered.set(i + 1, now());
      await res.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, gap));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const writer = readers.stdin.getWriter();
    await writer.write(new TextEncoder().encode("done\n"));
    await writer.close();
    while (!out.slice(out.indexOf("\n") + 1).includes("\n")) {
      const { done, value } = await lines.read();
      if (done) break;
      out += value;
    }
    await readers.status;
    const lastSeen: Record<string, number> = JSON.parse(
      out.slice(out.indexOf("\n") + 1),
    );
    const delays = [...answered].flatMap(([id, at]) => {
      const seen = lastSeen[id];
      return seen === undefined ? [] : [seen - at];
    }).sort((a, b) => a - b);
    return {
      store: redis ? "redis, 2 processes" : "memory",
      streams: count,
      idleRssPerStreamKb: grown * 1024 / count,
      p50Ms: percentile(delays, 0.5),
      p99Ms: percentile(delays, 0.99),
      maxMs: delays.at(-1) ?? NaN,
      delivered: delays.length,
    };
  } finally {
    for (const server of servers) await server.stop("SIGTERM");
    await redis?.kill();
  }
}

const rows: Row[] = [];
for (const store of stores) {
  for (const count of counts) {
    const row = await measure(store, count);
    rows.push(row);
    console.error(JSON.stringify(row));
  }
}
console.log(
  "| store | streams | idle RSS per stream | p50 | p99 | max | posts seen by all |",
);
console.log("|---|--:|--:|--:|--:|--:|--:|");
for (const r of rows) {
  console.log(
    `| ${r.store} | ${r.streams} | ${r.idleRssPerStreamKb.toFixed(1)} KB | ${
      r.p50Ms.toFixed(2)
    } ms | ${r.p99Ms.toFixed(2)} ms | ${
      r.maxMs.toFixed(2)
    } ms | ${r.delivered}/${posts} |`,
  );
}
