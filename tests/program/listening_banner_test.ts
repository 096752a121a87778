import assert from "node:assert/strict";
import { listeningBanner } from "../../src/program/listening_banner.ts";

const at = (hostname: string, port: number): Deno.NetAddr => ({
  transport: "tcp",
  hostname,
  port,
});

Deno.test("the banner names the bound address and the services served", () => {
  assert.equal(
    listeningBanner(at("127.0.0.1", 41234), "all"),
    "Listening on http://127.0.0.1:41234/ (services: messaging, quote)",
  );
  assert.equal(
    listeningBanner(at("0.0.0.0", 8000), "quote"),
    "Listening on http://0.0.0.0:8000/ (services: quote)",
  );
});

Deno.test("an IPv6 address is bracketed, so the URL in the banner can be opened", () => {
  const banner = listeningBanner(at("::1", 8000), "messaging");
  assert.equal(
    banner,
    "Listening on http://[::1]:8000/ (services: messaging)",
  );
  const url = new URL(banner.split(" ")[2] ?? "");
  assert.equal(url.hostname, "[::1]");
  assert.equal(url.port, "8000");
});
