/**
 * `--cors-origin` over real sockets: `fetch` sending an `Origin`, and pages
 * of a second and a third origin calling the program in real Chromium.
 */

import assert from "node:assert/strict";
import { browserMissing, launchBrowser } from "../_support/browser.ts";
import { startServer } from "../_support/program.ts";

Deno.test("over the wire: an allowed origin's preflight and requests get the headers, another origin's do not", async () => {
  const allowed = "http://pages.test:8080";
  const server = await startServer(["--quiet", `--cors-origin=${allowed}`]);
  try {
    const ask = async (method: string, path: string, origin: string) => {
      const res = await fetch(`${server.url}${path.slice(1)}`, {
        method,
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "x-messaging-token",
        },
      });
      await res.body?.cancel();
      return res;
    };
    const preflight = await ask("OPTIONS", "/", allowed);
    assert.equal(preflight.status, 204);
    assert.equal(
      preflight.headers.get("access-control-allow-methods"),
      "GET, HEAD, POST",
    );
    const simple = await ask("GET", "/", allowed);
    assert.equal(simple.headers.get("access-control-allow-origin"), allowed);
    const stream = await ask("GET", "/events", allowed);
    assert.equal(stream.headers.get("access-control-allow-origin"), allowed);

    const refusedPreflight = await ask("OPTIONS", "/", "http://evil.test");
    assert.equal(refusedPreflight.status, 405);
    assert.equal(
      refusedPreflight.headers.get("access-control-allow-origin"),
      null,
    );
    const refused = await ask("GET", "/", "http://evil.test");
    assert.equal(refused.headers.get("access-control-allow-origin"), null);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

/** A page of its own origin, for the browser to run cross-origin calls from. */
function servePage(): { origin: string; server: Deno.HttpServer } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response("<!doctype html><title>another site</title>", {
        headers: { "content-type": "text/html; charset=utf-8" },
      }),
  );
  return { origin: `http://127.0.0.1:${server.addr.port}`, server };
}

/** Runs in the page: every cross-origin call a chat page on another site makes. */
const CALLS = (api: string) =>
  `(async () => {
  const api = ${JSON.stringify(api)};
  const outcome = async (f) => { try { return await f(); } catch (e) { return "refused: " + e.name; } };
  const registered = await outcome(async () => (await (await fetch(api + "users", { method: "POST", body: "Eve" })).json()).token);
  const token = typeof registered === "string" && registered.startsWith("Eve-") ? registered : "Eve-x";
  const users = await outcome(async () => (await (await fetch(api + "users", { headers: { "X-Messaging-Token": token } })).json()).users);
  const live = await outcome(() => new Promise((resolve, reject) => {
    const source = new EventSource(api + "events");
    source.addEventListener("message", (e) => { source.close(); resolve(JSON.parse(e.data).text); });
    source.onerror = () => { source.close(); reject(new Error("EventSource")); };
    source.onopen = () => fetch(api, { method: "POST", headers: { "X-Messaging-Token": token }, body: JSON.stringify({ text: "from afar" }) }).catch(() => {});
    setTimeout(() => { source.close(); reject(new Error("timeout")); }, 3000);
  }));
  return { registered: typeof registered === "string" && registered.startsWith("refused") ? registered : "token", users, live };
})()`;

Deno.test({
  name:
    "in Chromium: a page of an allowed origin registers, lists with its token and follows the stream; a page of another origin is refused",
  ignore: browserMissing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const allowed = servePage();
    const other = servePage();
    const server = await startServer([
      "--quiet",
      `--cors-origin=${allowed.origin}`,
    ]);
    const api = server.url.replace("0.0.0.0", "127.0.0.1");
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${allowed.origin}/`);
      assert.deepEqual(await page.evaluate(CALLS(api)), {
        registered: "token",
        users: ["Eve"],
        live: "from afar",
      });
      const elsewhere = await browser.newPage();
      await elsewhere.goto(`${other.origin}/`);
      assert.deepEqual(await elsewhere.evaluate(CALLS(api)), {
        registered: "refused: TypeError",
        users: "refused: TypeError",
        live: "refused: Error",
      });
    } finally {
      await browser.close();
      await allowed.server.shutdown();
      await other.server.shutdown();
      assert.equal(await server.stop(), 0);
    }
  },
});
