import assert from "node:assert/strict";
import { statusMb } from "../../bench/proc.ts";

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
