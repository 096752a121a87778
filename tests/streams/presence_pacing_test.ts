/** Presence pacing: one event per user per interval, the last state last. */
import assert from "node:assert/strict";
import { PresencePacing } from "../../src/streams/presence_pacing.ts";

const PACE = 20;
const later = () => new Promise((resolve) => setTimeout(resolve, PACE * 3));

function paced() {
  const told: string[] = [];
  const pacing = new PresencePacing(
    PACE,
    (name, online) => told.push(`${name} ${online ? "on" : "off"}`),
  );
  return { told, pacing };
}

Deno.test("a state that came back to what was told within the interval is not told again", async () => {
  const { told, pacing } = paced();
  pacing.change("ann", true);
  pacing.change("ann", false);
  pacing.change("ann", true);
  await later();
  assert.deepEqual(told, ["ann on"]);
  pacing.close();
});

Deno.test("each user has an interval of its own", async () => {
  const { told, pacing } = paced();
  pacing.change("ann", true);
  pacing.change("bob", true);
  pacing.change("ann", false);
  assert.deepEqual(told, ["ann on", "bob on"]);
  await later();
  assert.deepEqual(told, ["ann on", "bob on", "ann off"]);
  pacing.close();
});

Deno.test("an unregistered user's waiting state is not told; a new user of the name is told at once", async () => {
  const { told, pacing } = paced();
  pacing.change("ann", true);
  pacing.change("ann", false);
  pacing.forget("ann");
  pacing.change("ann", true);
  await later();
  assert.deepEqual(told, ["ann on", "ann on"]);
  pacing.close();
});

Deno.test("closed, it tells nothing more and leaves no timer", async () => {
  const { told, pacing } = paced();
  pacing.change("ann", true);
  pacing.change("ann", false);
  pacing.close();
  await later();
  assert.deepEqual(told, ["ann on"]);
});
