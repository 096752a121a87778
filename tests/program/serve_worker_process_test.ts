import assert from "node:assert/strict";
import { freePort } from "../_support/program.ts";

const FIXTURE = new URL("../_support/late_worker.ts", import.meta.url).pathname;

/** GETs `url` until it answers, for at most 10 s. */
async function waitForAnswer(url: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      const res = await fetch(url, { headers: { connection: "close" } });
      await res.body?.cancel();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${url} never answered`);
}

Deno.test("deno serve --parallel: a worker stopped while still starting leaves the others to finish: the request in flight is answered and logged, and the process exits 0", async () => {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "serve",
      "--parallel",
      `--allow-read=${dir}`,
      `--allow-write=${dir}`,
      "--allow-env=LATE_WORKER_LOCK",
      "--host=127.0.0.1",
      `--port=${port}`,
      FIXTURE,
    ],
    env: { DENO_JOBS: "2", LATE_WORKER_LOCK: `${dir}/lock` },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const kill = setTimeout(() => child.kill("SIGKILL"), 20_000);
  try {
    // Only the first worker listens: the other is still starting.
    await waitForAnswer(`http://127.0.0.1:${port}/`).catch(async (error) => {
      try {
        child.kill("SIGKILL");
      } catch {
        // It has already exited, which is what its standard error explains.
      }
      const { stderr } = await child.output();
      throw new Error(`${error.message}: ${new TextDecoder().decode(stderr)}`);
    });
    const slow = fetch(`http://127.0.0.1:${port}/slow`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    child.kill("SIGTERM");
    const res = await slow;
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "early");
    const { code, stderr } = await child.output();
    const log = new TextDecoder().decode(stderr);
    assert.equal(code, 0, log);
    assert.match(log, / GET \/slow 200 /);
  } finally {
    clearTimeout(kill);
    await Deno.remove(dir, { recursive: true });
  }
});
