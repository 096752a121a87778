/** Who the client of a request is. */
import assert from "node:assert/strict";
import {
  clientAddressOf,
  UNKNOWN_CLIENT,
} from "../../src/http/client_address.ts";
import { connectionFrom } from "../_support/call.ts";

const req = (forwardedFor?: string) =>
  new Request("http://service.test/", {
    headers: forwardedFor === undefined
      ? {}
      : { "x-forwarded-for": forwardedFor },
  });

Deno.test("the connection's address, and X-Forwarded-For only when the proxy is trusted", () => {
  const direct = clientAddressOf();
  const proxied = clientAddressOf({ trustProxy: true });
  const peer = connectionFrom("10.0.0.7");
  assert.equal(direct(req("203.0.113.1"), peer), "10.0.0.7");
  assert.equal(proxied(req("198.51.100.1, 203.0.113.1 "), peer), "203.0.113.1");
  assert.equal(proxied(req(), peer), "10.0.0.7", "no header: the connection");
  assert.equal(proxied(req("a, "), peer), "10.0.0.7", "an empty last entry");
  assert.equal(
    proxied(req("x".repeat(65)), peer),
    "10.0.0.7",
    "a value too long to be an address",
  );
  assert.equal(direct(req()), UNKNOWN_CLIENT, "called without a connection");
});
