/**
 * `deno task bench:proxy`: the program behind deploy/nginx.conf (Debian's
 * nginx, the shipped file with only its two ports changed), flooded with
 * idle connections (silent, half a header, idle keep-alive) from many
 * loopback addresses, held by child processes (each may hold only so many
 * open files). Measures how many were open at once, when the proxy closed
 * each, what nginx and the program held meanwhile, and a fresh client's
 * latency (a new connection each time, GET /healthz) before and during the
 * flood.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { percentile } from "./median.ts";
import {
  childrenOf,
  netstatCounter,
  openFiles,
  readProc,
  statusMb,
} from "./proc.ts";
import { startServer } from "../tests/_support/program.ts";
import { nginxMissing, startProxy } from "../tests/_support/nginx.ts";
import {
  type HeldConnection,
  idleFlood,
  type IdleKind,
  loopbackAddresses,
} from "../tests/_support/idle_flood.ts";

const USAGE =
  `Usage: deno task bench:proxy [--connections=20000] [--addresses=200] [--processes=4] [--probe-ms=100]`;

const flags = flagsOf({
  connections: { type: "string", default: "20000" },
  addresses: { type: "string", default: "200" },
  processes: { type: "string", default: "4" },
  "probe-ms": { type: "string", default: "100" },
}, USAGE);
const connections = Number(flags.connections);
const addressCount = Number(flags.addresses);
const processes = Number(flags.processes);
const probeMs = Number(flags["probe-ms"]);
const whole = (n: number, min: number, max: number) =>
  Number.isInteger(n) && n >= min && n <= max;
if (
  !whole(connections, 3, 100_000) || !whole(processes, 1, 50) ||
  !whole(addressCount, processes, 10_000) || !whole(probeMs, 10, 10_000)
) {
  usageError("bad --connections, --addresses, --processes or --probe-ms");
}
// A child also needs a few files of its own.
if (Math.ceil(connections / processes) > 19_000) {
  usageError("more than 19,000 connections per process: add --processes");
}
if (nginxMissing) usageError(nginxMissing);

const now = () => performance.timeOrigin + performance.now();

/** One fresh client's request: a new connection, GET /healthz, read to the end. */
async function probe(port: number): Promise<{ ms: number; ok: boolean }> {
  const start = now();
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const timer = setTimeout(() => conn.close(), 5000);
    try {
      await conn.write(
        new TextEncoder().encode(
          "GET /healthz HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n",
        ),
      );
      let text = "";
      const buffer = new Uint8Array(4096);
      for (;;) {
        const n = await conn.read(buffer);
        if (n === null) break;
        text += new TextDecoder().decode(buffer.subarray(0, n));
      }
      return { ms: now() - start, ok: text.startsWith("HTTP/1.1 200 ") };
    } finally {
      clearTimeout(timer);
      try {
        conn.close();
      } catch {
        // Closed by the timer.
      }
    }
  } catch {
    return { ms: now() - start, ok: false };
  }
}

interface Probe {
  at: number;
  ms: number;
  ok: boolean;
}

/** Probes every `probeMs` until `until` says stop. */
async function probing(port: number, until: () => boolean): Promise<Probe[]> {
  const out: Probe[] = [];
  while (!until()) {
    const at = now();
    out.push({ at, ...await probe(port) });
    await new Promise((r) => setTimeout(r, Math.max(0, at + probeMs - now())));
  }
  return out;
}

const ms = (xs: number[], p: number) => percentile(xs, p).toFixed(1);
const s = (x: number) => (x / 1000).toFixed(1);

function latencyRow(label: string, probes: Probe[]): string {
  const sorted = probes.filter((p) => p.ok).map((p) => p.ms).sort((a, b) =>
    a - b
  );
  return `| ${label} | ${probes.length} | ${probes.length - sorted.length} | ${
    ms(sorted, 0.5)
  } | ${ms(sorted, 0.99)} | ${(sorted.at(-1) ?? NaN).toFixed(1)} |`;
}

/** The most connections open at one moment. */
function peakOpen(held: HeldConnection[]): number {
  const events = held.flatMap((c): [at: number, delta: number][] => [
    [c.openedAt, 1],
    [c.closedAt ?? Infinity, -1],
  ]).sort(([at, delta], [otherAt, otherDelta]) =>
    at - otherAt || delta - otherDelta
  );
  let open = 0;
  let peak = 0;
  for (const [, delta] of events) peak = Math.max(peak, open += delta);
  return peak;
}

const server = await startServer(["--trust-proxy", "--quiet"], {}, {
  discardStderr: true,
});
const proxy = await startProxy(Number(new URL(server.url).port));
try {
  const workers = childrenOf(proxy.process.pid);
  const nginxState = () => ({
    files: workers.reduce((sum, pid) => sum + openFiles(pid), 0),
    rssMb: workers.reduce((sum, pid) => sum + statusMb(pid, "VmRSS"), 0),
  });
  const programState = () => ({
    files: openFiles(server.process.pid),
    rssMb: statusMb(server.process.pid, "VmRSS"),
  });
  const idle = { nginx: nginxState(), program: programState() };
  let baselineDone = false;
  setTimeout(() => baselineDone = true, 3000);
  const baseline = await probing(proxy.port, () => baselineDone);

  const addresses = loopbackAddresses(addressCount);
  const overflowsBefore = netstatCounter("ListenOverflows");
  const start = now();
  const floods = Array.from({ length: processes }, (_, i) =>
    idleFlood({
      port: proxy.port,
      addresses: addresses.filter((_, a) => a % processes === i),
      count: Math.floor(connections / processes) +
        (i < connections % processes ? 1 : 0),
      holdMs: 60_000,
    }));
  let floodOver = false;
  const during = probing(proxy.port, () => floodOver);
  const opened = await Promise.all(floods.map((f) => f.opened));
  const allOpenAt = Math.max(...opened.map((o) => o.at));
  const loaded = { nginx: nginxState(), program: programState() };
  const held = (await Promise.all(floods.map((f) => f.held))).flat();
  floodOver = true;
  const probes = await during;
  const after = { nginx: nginxState(), program: programState() };
  const overflows = netstatCounter("ListenOverflows") - overflowsBefore;

  const closedAts = held.map((c) => c.closedAt).filter((t) => t !== null);
  const firstClose = Math.min(...closedAts);
  const lastClose = Math.max(...closedAts);
  const failed = opened.reduce((sum, o) => sum + o.failed, 0);
  const fileLimit = readProc(`/proc/${workers[0]}/limits`)
    .match(/^Max open files\s+(\d+)/m)?.[1];
  console.log(
    `${connections} idle connections asked for, from ${addressCount} addresses (127.0.x.y) in ${processes} processes; nginx ${workers.length} workers, each limited to ${fileLimit} open files.\n`,
  );
  console.log("| | figure |\n|---|--:|");
  console.log(`| connections opened | ${held.length} |`);
  console.log(
    `| failed to open${
      failed ? ` (first: ${opened.find((o) => o.firstError)?.firstError})` : ""
    } | ${failed} |`,
  );
  console.log(`| all opened after | ${s(allOpenAt - start)} s |`);
  console.log(
    `| listen queue overflows (a SYN dropped, retried after 1 s; whole machine) | ${overflows} |`,
  );
  console.log(`| most open at once | ${peakOpen(held)} |`);
  console.log(`| closed by the proxy | ${closedAts.length} |`);
  console.log(
    `| first closed, after the flood began | ${s(firstClose - start)} s |`,
  );
  console.log(
    `| last closed, after the flood began | ${s(lastClose - start)} s |`,
  );
  console.log(
    `| still open ${s(60_000)} s after opening | ${
      held.length - closedAts.length
    } |`,
  );

  console.log(
    "\n| kind | connections | closed by the proxy | idle when closed: min | p50 | max |",
  );
  console.log("|---|--:|--:|--:|--:|--:|");
  for (const kind of ["silent", "half-header", "keep-alive"] as IdleKind[]) {
    const ofKind = held.filter((c) => c.kind === kind);
    const idleS = ofKind.filter((c) => c.closedAt !== null)
      .map((c) => c.closedAt! - c.idleFrom).sort((a, b) => a - b);
    console.log(
      `| ${kind} | ${ofKind.length} | ${idleS.length} | ${
        s(idleS[0] ?? NaN)
      } s | ${s(percentile(idleS, 0.5))} s | ${s(idleS.at(-1) ?? NaN)} s |`,
    );
  }

  console.log(
    "\nA fresh client (a new connection each time, GET /healthz through the proxy):\n",
  );
  console.log("| when | requests | failed | p50 ms | p99 ms | max ms |");
  console.log("|---|--:|--:|--:|--:|--:|");
  console.log(latencyRow("before the flood", baseline));
  console.log(
    latencyRow("flood opening", probes.filter((p) => p.at < allOpenAt)),
  );
  console.log(
    latencyRow(
      "all open, none closed yet",
      probes.filter((p) => p.at >= allOpenAt && p.at < firstClose),
    ),
  );
  console.log(
    latencyRow(
      "while the proxy closes them",
      probes.filter((p) => p.at >= firstClose),
    ),
  );
  console.log(latencyRow("whole flood", probes));

  console.log("\n| process | when | open files | RSS MB |\n|---|---|--:|--:|");
  for (
    const [when, state] of [["idle", idle], ["all open", loaded], [
      "after",
      after,
    ]] as const
  ) {
    console.log(
      `| nginx workers | ${when} | ${state.nginx.files} | ${
        state.nginx.rssMb.toFixed(1)
      } |`,
    );
    console.log(
      `| program | ${when} | ${state.program.files} | ${
        state.program.rssMb.toFixed(1)
      } |`,
    );
  }
  // The file-limit alert is expected when nginx may not raise its limit.
  const complaints = proxy.errorLog().split("\n").filter((line) =>
    /\[(error|crit|alert|emerg)\]/.test(line) && !line.includes("setrlimit")
  );
  console.log(
    `\nnginx error log: ${complaints.length} lines at [error] or worse${
      complaints.length ? `, first: ${complaints[0]}` : ""
    }`,
  );
  for (const flood of floods) flood.kill();
} finally {
  await proxy.stop();
  await server.stop();
}
