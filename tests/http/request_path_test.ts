import assert from "node:assert/strict";
import { pathOf, requestPath } from "../../src/http/request_path.ts";

Deno.test("pathOf takes the path of an absolute URL, without the query", () => {
  assert.equal(pathOf("http://h:8000/users?x=1"), "/users");
  assert.equal(pathOf("http://h/"), "/");
  assert.equal(pathOf("http://h"), "/");
  assert.equal(pathOf("http://[::1]:80/quote"), "/quote");
  assert.equal(pathOf("http://h/a/b?c=/d"), "/a/b");
});

Deno.test("the Host header never chooses the path, whatever it holds", () => {
  assert.equal(pathOf("http://x/users?/", "x/users?"), "/");
  assert.equal(pathOf("http://x/users?/quote", "x/users?"), "/quote");
  assert.equal(pathOf("http://a/quote#/", "a/quote#"), "/");
  assert.equal(pathOf("http://h:8000/users?x=1", "h:8000"), "/users");
  // Bytes above 0x7F arrive one character per byte in the header and
  // decoded as UTF-8 in the URL.
  assert.equal(pathOf("http://é/users?/", "\u00c3\u00a9/users?"), "/");
  // An absolute-form target names its own authority; no Host, the URL's.
  assert.equal(pathOf("http://evil/users", "x"), "/users");
  assert.equal(pathOf("http://localhost:8000/quote", null), "/quote");
});

Deno.test("requestPath: the Host header never chooses the path, on the quick way or the other", () => {
  const path = (url: string, host?: string) =>
    requestPath(new Request(url, { headers: host ? { host } : {} }));
  assert.equal(path("http://h:8000/users?x=1", "h:8000"), "/users");
  assert.equal(path("http://h:8000/quote/events", "h:8000"), "/quote/events");
  assert.equal(path("http://x/users?/", "x/users?"), "/");
  assert.equal(path("http://x/users?/quote", "x/users?"), "/quote");
  assert.equal(path("http://x//", "x/"), "/");
  assert.equal(path("http://h/?next=/users", "h"), "/");
});
