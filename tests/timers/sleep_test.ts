import assert from "node:assert/strict";
import { sleep } from "../../src/timers/sleep.ts";

/** Whether `pause` ended well before its own 60 s: a second is ample. */
async function endsEarly(pause: Promise<void>): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) =>
    timer = setTimeout(() => r(false), 1000)
  );
  try {
    return await Promise.race([pause.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("sleep ends after its time, at once on abort, or when `until` settles", async () => {
  const never = new AbortController();
  const started = performance.now();
  await sleep(20, never.signal);
  assert.ok(performance.now() - started >= 19);

  const closing = new AbortController();
  const long = sleep(60_000, closing.signal);
  closing.abort();
  assert.ok(await endsEarly(long), "an abort ends a sleep");
  assert.ok(
    await endsEarly(sleep(60_000, closing.signal)),
    "a sleep on an aborted signal ends at once",
  );

  let ready!: () => void;
  const until = new Promise<void>((resolve) => ready = resolve);
  const waiting = sleep(60_000, never.signal, until);
  ready();
  assert.ok(await endsEarly(waiting), "`until` settling ends a sleep");
});

Deno.test("sleep leaves no listener on a signal that outlives it", async () => {
  const { signal } = new AbortController();
  let listening = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<typeof add>) => {
    listening++;
    add(...args);
  };
  signal.removeEventListener = (...args: Parameters<typeof remove>) => {
    listening--;
    remove(...args);
  };
  for (let i = 0; i < 100; i++) await sleep(0, signal);
  assert.equal(listening, 0);
});

// A race on a promise that settles only at close kept one reaction per
// call until then: about 300 bytes a second on a Sentinel link.
Deno.test("a process that sleeps often on one signal does not grow", async () => {
  const script = `
    import { sleep } from ${
    JSON.stringify(new URL("../../src/timers/sleep.ts", import.meta.url).href)
  };
    const { signal } = new AbortController();
    const now = Promise.resolve();
    for (let i = 0; i < 5000; i++) await sleep(60000, signal, now);
    gc();
    const before = Deno.memoryUsage().heapUsed;
    for (let i = 0; i < 20000; i++) await sleep(60000, signal, now);
    gc();
    console.log((Deno.memoryUsage().heapUsed - before) / 20000);
  `;
  const { stdout, success } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--expose-gc", script],
  }).output();
  assert.ok(success);
  const bytesPerSleep = Number(new TextDecoder().decode(stdout));
  assert.ok(bytesPerSleep < 16, `${bytesPerSleep} bytes kept per sleep`);
});
