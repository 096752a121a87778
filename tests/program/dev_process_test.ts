/** `deno task dev`: the program under Deno's watcher stops, watcher and all, on SIGTERM as on Ctrl-C. */

import assert from "node:assert/strict";
import config from "../../deno.json" with { type: "json" };

const ROOT = new URL("../../", import.meta.url).pathname;

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.test(`deno task dev: ${signal} ends the watcher too`, async () => {
    // The task's own command line: `LMS_WATCH=1 deno run --watch ... main.ts`.
    const [assignment = "", deno, ...args] = config.tasks.dev.split(" ");
    assert.equal(deno, "deno");
    const [name = "", value = ""] = assignment.split("=");
    const child = new Deno.Command(Deno.execPath(), {
      args: [...args, "--port=0", "--hostname=127.0.0.1", "--quiet"],
      cwd: ROOT,
      env: { [name]: value },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const banner = (await out.read()).value ?? "";
    assert.match(banner, /^Listening on http:\/\/127\.0\.0\.1:\d+\//);
    const watchdog = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.kill(signal);
    const status = await child.status;
    clearTimeout(watchdog);
    await out.cancel();
    await child.stderr.cancel();
    assert.notEqual(status.signal, "SIGKILL", "the watcher had to be killed");
  });
}
