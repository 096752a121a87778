/**
 * What each WebSocket follower keeps on the JavaScript heap, by kind of
 * object: starts the program (memory store) or the plain fan-out floor
 * under the V8 inspector, takes a heap snapshot, opens `--followers`
 * sockets to `/events`, takes another, and prints the difference per
 * follower, largest first. Used for bench/results/profiles/scale.md.
 *
 * ```sh
 * deno run -A tools/heap_per_follower.ts --target=program --followers=3000
 * deno run -A tools/heap_per_follower.ts --target=floor --followers=3000
 * ```
 * @module
 */

import { parseArgs } from "node:util";
import { fanOut } from "../bench/peers/fan_out.ts";
import { freePort, waitForPort } from "../tests/_support/program.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    target: { type: "string", default: "program" },
    followers: { type: "string", default: "3000" },
    "serve-floor": { type: "string" },
  },
});

if (values["serve-floor"] !== undefined) {
  const followers = fanOut();
  Deno.serve(
    {
      hostname: "127.0.0.1",
      port: Number(values["serve-floor"]),
      onListen() {},
    },
    (req) =>
      new URL(req.url).pathname === "/events"
        ? followers.follow(req)
        : new Response("floor"),
  );
} else await measure(values.target!, Number(values.followers));

type Totals = Map<string, { count: number; bytes: number }>;

/** Self sizes summed by `type:name` over a snapshot of the process inspected on `port`. */
async function heapByKind(port: number): Promise<Totals> {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`))
    .json();
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve) => socket.onopen = resolve);
  const chunks: string[] = [];
  const waiting = new Map<number, () => void>();
  socket.onmessage = ({ data }) => {
    const message = JSON.parse(data);
    if (message.method === "HeapProfiler.addHeapSnapshotChunk") {
      chunks.push(message.params.chunk);
    } else waiting.get(message.id)?.();
  };
  let id = 0;
  const call = (method: string) =>
    new Promise<void>((resolve) => {
      waiting.set(++id, resolve);
      socket.send(JSON.stringify({ id, method, params: {} }));
    });
  for (const method of ["enable", "collectGarbage", "takeHeapSnapshot"]) {
    await call(`HeapProfiler.${method}`);
  }
  socket.close();
  const { snapshot, nodes, strings } = JSON.parse(chunks.join(""));
  const fields: string[] = snapshot.meta.node_fields;
  const types: string[] = snapshot.meta.node_types[0];
  const type = fields.indexOf("type");
  const name = fields.indexOf("name");
  const size = fields.indexOf("self_size");
  const totals: Totals = new Map();
  for (let i = 0; i < nodes.length; i += fields.length) {
    const kind = types[nodes[i + type]] ?? "?";
    // Strings and code are named by their text: count them as one kind each.
    const named = /string|code/.test(kind)
      ? kind
      : `${kind}:${String(strings[nodes[i + name]]).slice(0, 50)}`;
    const total = totals.get(named) ?? { count: 0, bytes: 0 };
    total.count++;
    total.bytes += nodes[i + size];
    totals.set(named, total);
  }
  return totals;
}

async function measure(target: string, followers: number) {
  const port = freePort();
  const inspector = freePort();
  const server = target === "floor"
    ? [import.meta.filename!, `--serve-floor=${port}`]
    : [
      new URL("../main.ts", import.meta.url).pathname,
      `--port=${port}`,
      "--hostname=127.0.0.1",
      "--quiet",
      // One address opens every socket here.
      `--max-streams=${followers + 10}`,
      `--max-streams-per-client=${followers + 10}`,
      `--max-websockets-per-client=${followers + 10}`,
    ];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `--inspect=127.0.0.1:${inspector}`, ...server],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await waitForPort(port, target);
    const before = await heapByKind(inspector);
    const sockets: WebSocket[] = [];
    for (let i = 0; i < followers; i++) {
      const socket = new WebSocket(`ws://127.0.0.1:${port}/events`);
      sockets.push(socket);
      await new Promise((resolve, reject) => {
        socket.onopen = resolve;
        socket.onerror = reject;
      });
    }
    const after = await heapByKind(inspector);
    const rows = [...after].map(([kind, { count, bytes }]) => {
      const was = before.get(kind) ?? { count: 0, bytes: 0 };
      return {
        kind,
        each: (count - was.count) / followers,
        bytes: (bytes - was.bytes) / followers,
      };
    }).filter((row) => row.bytes >= 8).sort((a, b) => b.bytes - a.bytes);
    const total = rows.reduce((sum, row) => sum + row.bytes, 0);
    console.log(
      `${target}, ${followers} WebSocket followers: ${
        (total / 1024).toFixed(2)
      } KB of heap each`,
    );
    for (const row of rows.slice(0, 25)) {
      console.log(
        `${row.bytes.toFixed(0).padStart(6)} B ${
          row.each.toFixed(2).padStart(6)
        } × ${row.kind}`,
      );
    }
    for (const socket of sockets) socket.close();
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
}
