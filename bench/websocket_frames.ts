/**
 * `deno task bench:websocket-frames`: what clients sending huge WebSocket
 * frames make the program hold. Deno reads each client frame whole, up to
 * 64 MiB, before the program sees it (denoland/deno#15809), so the bound is
 * how many sockets a client may open. For each count of addresses (bound to
 * 127.0.1.x), every address opens `--sockets` upgrades of `/events`
 * and sends one `--frame-mib` binary frame on each that is let in; RSS of the
 * program before, at its peak (VmHWM) and after all are closed, and how long
 * a fresh `/healthz` took meanwhile. The program runs with its defaults.
 * @module
 */

import net from "node:net";
import { flagsOf, usageError } from "./cli.ts";
import { statusMb } from "./proc.ts";
import { startServer } from "../tests/_support/program.ts";

const USAGE = `Usage: deno task bench:websocket-frames [flags]
  --addresses=N,...  counts of client addresses (default 1,4,20)
  --sockets=N        upgrades each address tries (default 20)
  --frame-mib=N      size of each frame in MiB (default 60)
  --root=DIR         measure the program of another checkout (default this one)`;

const flags = flagsOf({
  addresses: { type: "string", default: "1,4,20" },
  sockets: { type: "string", default: "20" },
  "frame-mib": { type: "string", default: "60" },
  root: { type: "string" },
}, USAGE);
const ADDRESSES = flags.addresses.split(",").map(Number);
const SOCKETS = Number(flags.sockets);
const FRAME_MIB = Number(flags["frame-mib"]);
if (
  ADDRESSES.some((n) => !(Number.isInteger(n) && n >= 1 && n <= 250)) ||
  !(Number.isInteger(SOCKETS) && SOCKETS >= 1 && SOCKETS <= 100) ||
  !(Number.isInteger(FRAME_MIB) && FRAME_MIB >= 1 && FRAME_MIB <= 63)
) usageError("bad --addresses, --sockets or --frame-mib");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// One zero-filled payload for every socket; a zero mask key leaves it as is.
const payload = new Uint8Array(FRAME_MIB * 1024 * 1024);

/** The head of one masked binary frame of `length` bytes, mask key zero. */
function frameHead(length: number): Uint8Array {
  const head = new Uint8Array(14);
  head[0] = 0x82;
  head[1] = 0x80 | 127;
  new DataView(head.buffer).setBigUint64(2, BigInt(length));
  return head;
}

/**
 * Upgrades `/events` from `localAddress`; when let in (101), sends the
 * frame. Answers the status and a promise that settles when the socket ends.
 */
function upgradeAndSend(
  port: number,
  localAddress: string,
): Promise<{ status: number; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port, localAddress });
    const ended = new Promise<void>((done) => socket.on("close", () => done()));
    let head = "";
    socket.on("error", () => {});
    socket.on("connect", () =>
      socket.write(
        "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n" +
          "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      ));
    socket.on("data", function first(chunk: Uint8Array) {
      head += new TextDecoder().decode(chunk);
      if (!head.includes("\r\n")) return;
      socket.off("data", first);
      socket.on("data", () => {});
      const status = Number(head.split(" ")[1]);
      if (status === 101) {
        socket.write(frameHead(payload.length));
        socket.write(payload);
      } else socket.end();
      resolve({ status, ended });
    });
    socket.on("close", () => reject(new Error("closed before an answer")));
  });
}

/** Milliseconds a fresh `/healthz` takes. */
async function healthzMs(url: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}healthz`);
  await res.body?.cancel();
  return performance.now() - started;
}

console.log(
  `| addresses | sockets let in | refused | RSS before MB | peak MB | after MB | /healthz max ms |`,
);
console.log("|--:|--:|--:|--:|--:|--:|--:|");
for (const count of ADDRESSES) {
  const server = await startServer(["--quiet"], {}, { root: flags.root });
  const before = statusMb(server.process.pid, "VmRSS");
  const port = Number(new URL(server.url).port);
  let worstHealthz = 0;
  const probing = (async () => {
    for (let i = 0; i < 200; i++) {
      worstHealthz = Math.max(worstHealthz, await healthzMs(server.url));
      await sleep(50);
    }
  })();
  const answers = await Promise.all(
    Array.from({ length: count }, (_, a) =>
      Array.from(
        { length: SOCKETS },
        () => upgradeAndSend(port, `127.0.1.${a + 1}`),
      )).flat(),
  );
  const accepted = answers.filter((a) => a.status === 101);
  await Promise.race([
    Promise.all(accepted.map((a) => a.ended)),
    sleep(120_000),
  ]);
  await sleep(2000);
  const peak = statusMb(server.process.pid, "VmHWM");
  const after = statusMb(server.process.pid, "VmRSS");
  await probing.catch(() => {});
  console.log(
    `| ${count} | ${accepted.length} | ${answers.length - accepted.length} | ${
      before.toFixed(1)
    } | ${peak.toFixed(1)} | ${after.toFixed(1)} | ${
      worstHealthz.toFixed(0)
    } |`,
  );
  await server.stop("SIGKILL");
}
