import assert from "node:assert/strict";
import {
  childrenOf,
  netstatCounter,
  openFiles,
  statusMb,
} from "../../bench/proc.ts";

Deno.test("statusMb: this process's resident memory, never above its peak", () => {
  const rss = statusMb(Deno.pid, "VmRSS");
  assert.ok(rss > 1, `${rss} MB`);
  assert.ok(statusMb(Deno.pid, "VmHWM") >= rss);
});

Deno.test("statusMb: 0 for a process that is gone", async () => {
  const child = new Deno.Command("true").spawn();
  await child.status;
  assert.equal(statusMb(child.pid, "VmRSS"), 0);
});

Deno.test("openFiles: counts each file this process opens, 0 once a process is gone", async () => {
  const before = openFiles(Deno.pid);
  const files = Array.from({ length: 5 }, () => Deno.openSync(Deno.execPath()));
  try {
    // At least: the runtime may open a file of its own meanwhile.
    assert.ok(openFiles(Deno.pid) >= before + 5);
  } finally {
    for (const file of files) file.close();
  }
  const child = new Deno.Command("true").spawn();
  await child.status;
  assert.equal(openFiles(child.pid), 0);
});

Deno.test("childrenOf: the processes a process started, and no others", async () => {
  const children = [1, 2].map(() =>
    new Deno.Command("sleep", { args: ["5"] }).spawn()
  );
  try {
    assert.deepEqual(
      childrenOf(Deno.pid).filter((pid) => children.some((c) => c.pid === pid))
        .sort(),
      children.map((c) => c.pid).sort(),
    );
    for (const child of children) assert.deepEqual(childrenOf(child.pid), []);
  } finally {
    for (const child of children) {
      child.kill();
      await child.status;
    }
  }
});

Deno.test("netstatCounter: the value under its name, in whichever section it is; NaN for a name not there", () => {
  const text = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\n" +
    "TcpExt: 4 271 300\n" +
    "IpExt: InNoRoutes InOctets\n" +
    "IpExt: 7 123456\n";
  assert.equal(netstatCounter("ListenOverflows", text), 271);
  assert.equal(netstatCounter("ListenDrops", text), 300);
  assert.equal(netstatCounter("InOctets", text), 123456);
  assert.ok(Number.isNaN(netstatCounter("NoSuchCounter", text)));
  // The section's own label is not a counter.
  assert.ok(Number.isNaN(netstatCounter("TcpExt:", text)));
});

Deno.test("netstatCounter: reads this machine's ListenOverflows", () => {
  const overflows = netstatCounter("ListenOverflows");
  assert.ok(Number.isInteger(overflows) && overflows >= 0, `${overflows}`);
});
