import assert from "node:assert/strict";
import { createHandler } from "../src/app.ts";
import { call } from "./_helpers.ts";

const paths: [string, string, "messaging" | "quote"][] = [
  ["GET", "/", "messaging"],
  ["POST", "/users", "messaging"],
  ["GET", "/quote", "quote"],
];

for (const service of ["all", "messaging", "quote"] as const) {
  Deno.test(`--service=${service} serves its paths and answers 404 on the others`, async () => {
    const handler = createHandler({ service });
    for (const [method, path, owner] of paths) {
      const res = await call(handler, method, path, {
        body: method === "POST" ? "alice" : undefined,
      });
      const served = service === "all" || service === owner;
      assert.equal(res.status, served ? 200 : 404, `${method} ${path}`);
    }
  });
}
