import assert from "node:assert/strict";
import { newToken } from "../../src/auth/token.ts";

Deno.test("a token is 40 lowercase hex digits, and no two are alike across pool refills", () => {
  // 2,000 draws cross the pool of 512 tokens' bytes three times.
  const tokens = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const token = newToken();
    assert.match(token, /^[0-9a-f]{40}$/);
    tokens.add(token);
  }
  assert.equal(tokens.size, 2000);
});

Deno.test("tokens use every hex digit about evenly: the bytes are random, not a counter", () => {
  const counts = new Map<string, number>();
  for (let i = 0; i < 1000; i++) {
    for (const digit of newToken()) {
      counts.set(digit, (counts.get(digit) ?? 0) + 1);
    }
  }
  // 40,000 digits: 2,500 of each expected; 2,000 is 10 standard deviations off.
  assert.equal(counts.size, 16);
  for (const [digit, count] of counts) {
    assert.ok(count > 2000 && count < 3000, `${digit}: ${count}`);
  }
});
