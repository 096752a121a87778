import assert from "node:assert/strict";
import { SERVICES, servicesOf } from "../../src/services/service_names.ts";

Deno.test("a selection stands for its services: all for every one, a name for itself", () => {
  assert.deepEqual(servicesOf("all"), ["messaging", "quote"]);
  assert.deepEqual(servicesOf("all"), [...SERVICES]);
  assert.deepEqual(servicesOf("quote"), ["quote"]);
  assert.deepEqual(servicesOf("messaging"), ["messaging"]);
});

Deno.test("the list a caller gets is its own: changing it changes no later answer", () => {
  const mine = servicesOf("all");
  mine.pop();
  mine.push("quote");
  assert.deepEqual(servicesOf("all"), ["messaging", "quote"]);
  assert.deepEqual(SERVICES, ["messaging", "quote"]);
});
