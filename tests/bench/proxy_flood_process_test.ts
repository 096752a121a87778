/** `deno task bench:proxy` measures what it says: every idle connection held at once, then closed by the proxy, a fresh client served throughout. */

import assert from "node:assert/strict";
import { nginxMissing } from "../_support/nginx.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test({
  name:
    "bench/proxy_flood.ts: 300 idle connections from 2 processes, all open at once, all closed by the proxy, no fresh request failed",
  ignore: nginxMissing !== undefined,
  async fn() {
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        "bench/proxy_flood.ts",
        "--connections=300",
        "--processes=2",
        "--addresses=10",
        "--probe-ms=200",
      ],
      cwd: ROOT,
      signal: AbortSignal.timeout(90_000),
    }).output();
    const out = new TextDecoder().decode(stdout);
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    const figure = (label: string) =>
      out.split("\n").find((line) => line.startsWith(`| ${label} |`))
        ?.split("|")[2]?.trim();
    assert.equal(figure("connections opened"), "300", out);
    assert.equal(figure("most open at once"), "300", out);
    assert.equal(figure("closed by the proxy"), "300", out);
    const whole = out.split("\n").find((line) =>
      line.startsWith("| whole flood |")
    )?.split("|").map((cell) => cell.trim());
    assert.ok(whole, out);
    // Requests made during the flood, and none failed.
    assert.ok(Number(whole[2]) > 10, out);
    assert.equal(whole[3], "0", out);
  },
});
