import assert from "node:assert/strict";
import { createHandler } from "../../src/program/app.ts";
import { createMessagingService } from "../../src/services/messaging.ts";
import { call } from "../_support/call.ts";

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return new Uint8Array(digest).toBase64();
}

/** The text of every `<tag ...>…</tag>` in `html`. */
function inline(html: string, tag: string): string[] {
  return [...html.matchAll(new RegExp(`<${tag}[^>]*>([^]*?)</${tag}>`, "g"))]
    .map(([, text = ""]) => text);
}

Deno.test("GET /chat is one HTML page whose policy allows only its own inline style and script", async () => {
  const res = await call(createHandler(), "GET", "/chat");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/html; charset=UTF-8");
  assert.match(res.text, /^<!doctype html>/i);
  const policy = res.headers.get("content-security-policy") ?? "";
  const directives = new Map(
    policy.split(";").map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name, values] as const;
    }),
  );
  assert.deepEqual(directives.get("default-src"), ["'none'"]);
  assert.deepEqual(directives.get("connect-src"), ["'self'"]);
  const [script, ...otherScripts] = inline(res.text, "script");
  const [style, ...otherStyles] = inline(res.text, "style");
  assert.ok(script !== undefined && otherScripts.length === 0, "one script");
  assert.ok(style !== undefined && otherStyles.length === 0, "one style");
  assert.deepEqual(directives.get("script-src"), [
    `'sha256-${await sha256(script)}'`,
  ]);
  assert.deepEqual(directives.get("style-src"), [
    `'sha256-${await sha256(style)}'`,
  ]);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
});

Deno.test("the page loads nothing from elsewhere and has no inline event handlers", async () => {
  const { text } = await call(createHandler(), "GET", "/chat");
  assert.doesNotMatch(text, /\s(src|href|action)\s*=\s*["']?(https?:)?\/\//i);
  assert.doesNotMatch(text, /<[^>]+\son[a-z]+\s*=/i);
  assert.doesNotMatch(text, /innerHTML|outerHTML|insertAdjacentHTML/);
  assert.match(text, /(EventSource|follow|followAsUser)\(\s*"\/events"/);
  // The script's import is inlined: a module import would load a file.
  const [script = ""] = inline(text, "script");
  assert.doesNotMatch(script, /^\s*import\b/m);
  assert.match(script, /function headerValue\(/);
});

Deno.test("HEAD /chat answers the headers with no body; other methods are 405", async () => {
  const handler = createHandler();
  const get = await call(handler, "GET", "/chat");
  const head = await call(handler, "HEAD", "/chat");
  assert.equal(head.status, 200);
  assert.equal(head.text, "");
  assert.equal(
    head.headers.get("content-length"),
    String(new TextEncoder().encode(get.text).byteLength),
  );
  assert.equal(
    head.headers.get("content-security-policy"),
    get.headers.get("content-security-policy"),
  );
  const post = await call(handler, "POST", "/chat", { body: "x" });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get("allow"), "GET, HEAD");
});

Deno.test("the quote panel shows only when the quote service is served beside messaging", async () => {
  const quotePanel = (html: string) =>
    html.match(/<section id="quote-panel"[^>]*>/)?.[0] ?? "";
  const all = await call(createHandler({ service: "all" }), "GET", "/chat");
  assert.doesNotMatch(quotePanel(all.text), /\shidden/);
  const alone = await call(
    createHandler({ service: "messaging" }),
    "GET",
    "/chat",
  );
  assert.match(quotePanel(alone.text), /\shidden/);
  const factory = await call(createMessagingService(), "GET", "/chat");
  assert.equal(factory.status, 200);
  assert.match(quotePanel(factory.text), /\shidden/);
  const quoteOnly = await call(
    createHandler({ service: "quote" }),
    "GET",
    "/chat",
  );
  assert.equal(quoteOnly.status, 404);
});
