/** The page's tabs sharing one set of streams, under Deno's own Web Locks and BroadcastChannel. */
import assert from "node:assert/strict";
import { shareAmongTabs } from "../../src/web/shared_tabs.ts";

const tick = () => new Promise((r) => setTimeout(r, 30));

/** A tab under `name` that notes what happens to it in `log`. */
function tab(name: string, label: string, log: string[]) {
  return shareAmongTabs<string>({
    name,
    lead: () => log.push(`${label} leads`),
    follow: () => log.push(`${label} follows`),
    hear: (event) => log.push(`${label} heard ${event}`),
    greet: () => log.push(`${label} greets`),
  });
}

Deno.test("one tab leads; a tab that starts is greeted; only the leader's telling is heard; when it closes the next in line leads", async () => {
  const name = `tabs-${crypto.randomUUID()}`;
  const log: string[] = [];
  const a = tab(name, "a", log);
  await tick();
  const b = tab(name, "b", log);
  await tick();
  const c = tab(name, "c", log);
  await tick();
  assert.deepEqual(log, [
    "a leads",
    "b follows",
    "a greets",
    "c follows",
    "a greets",
  ]);
  log.length = 0;
  a.tell("one");
  b.tell("not heard: b does not lead");
  await tick();
  assert.deepEqual(log.sort(), ["b heard one", "c heard one"]);
  log.length = 0;
  a.close();
  await tick();
  assert.deepEqual(log, ["b leads"]);
  assert.equal(b.leading, true);
  assert.equal(c.leading, false);
  log.length = 0;
  b.tell("two");
  await tick();
  assert.deepEqual(log, ["c heard two"]);
  b.close();
  c.close();
});

Deno.test("pages under other names do not share", async () => {
  const log: string[] = [];
  const a = tab(`tabs-${crypto.randomUUID()}`, "a", log);
  const b = tab(`tabs-${crypto.randomUUID()}`, "b", log);
  await tick();
  assert.deepEqual(log.sort(), ["a leads", "b leads"]);
  a.close();
  b.close();
});
