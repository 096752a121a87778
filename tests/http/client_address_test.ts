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

Deno.test("a forwarded address counts in one spelling: IPv6 canonical, IPv4-mapped as IPv4, no zone, no port; anything else is not an address", () => {
  const proxied = clientAddressOf({ trustProxy: true });
  const peer = connectionFrom("10.0.0.7");
  const spellings: [string, string][] = [
    ["2001:DB8::1", "2001:db8::1"],
    ["2001:db8:0:0:0:0:0:1", "2001:db8::1"],
    ["2001:db8::1%eth0", "2001:db8::1"],
    ["::ffff:10.5.5.5", "10.5.5.5"],
    ["::FFFF:10.5.5.5", "10.5.5.5"],
    ["::ffff:a05:505", "10.5.5.5"],
    ["0:0:0:0:0:ffff:10.5.5.5", "10.5.5.5"],
    ["10.5.5.5", "10.5.5.5"],
    // With the port, as some proxies send it.
    ["10.5.5.5:1234", "10.5.5.5"],
    ["[2001:DB8::1]:443", "2001:db8::1"],
    ["[::ffff:10.5.5.5]:80", "10.5.5.5"],
    ["[2001:db8::1]", "2001:db8::1"],
    // Not addresses: the connection's own address stands.
    ["010.5.5.5", "10.0.0.7"],
    ["10.5.5.05", "10.0.0.7"],
    ["10.5.5.5:", "10.0.0.7"],
    ["10.5.5.5:123456", "10.0.0.7"],
    ["2001:db8::1:443", "2001:db8::1:443"],
    ["[2001:db8::1", "10.0.0.7"],
    ["garbage0", "10.0.0.7"],
    ["limited:99999 10.0.0.8", "10.0.0.7"],
  ];
  for (const [forwarded, client] of spellings) {
    assert.equal(proxied(req(forwarded), peer), client, forwarded);
  }
});
