import assert from "node:assert/strict";
import { roundOrder } from "../../bench/round_order.ts";

const servers = Array.from({ length: 11 }, (_, i) => `s${i}`);

/** Each server's places over `rounds` rounds. */
function places(rounds: number): Map<string, number[]> {
  const seen = new Map<string, number[]>(servers.map((s) => [s, []]));
  for (let round = 0; round < rounds; round++) {
    const order = roundOrder(servers, round, rounds);
    assert.deepEqual(
      [...order].sort(),
      [...servers].sort(),
      "every server once",
    );
    order.forEach((server, place) => seen.get(server)!.push(place));
  }
  return seen;
}

Deno.test("round order: with as many rounds as servers, each server takes every place once", () => {
  for (const [server, at] of places(servers.length)) {
    assert.deepEqual(
      at.sort((a, b) => a - b),
      servers.map((_, i) => i),
      server,
    );
  }
});

Deno.test("round order: over 5 rounds of 11 servers, each runs both in the first half and in the second", () => {
  for (const [server, at] of places(5)) {
    assert.ok(at.some((place) => place < 5), `${server}: ${at}`);
    assert.ok(at.some((place) => place > 5), `${server}: ${at}`);
  }
});

Deno.test("round order: one round keeps the order given", () => {
  assert.deepEqual(roundOrder(servers, 0, 1), servers);
});
