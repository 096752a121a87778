/**
 * A pause that a closing ends early.
 * @module
 */

/**
 * Resolves after `ms`, when `signal` aborts, or when `until` settles,
 * whichever is first. It removes its listener: a race on a promise that
 * settles only at close would keep one reaction per call until then.
 */
export function sleep(
  ms: number,
  signal?: AbortSignal,
  until?: Promise<unknown>,
): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    until?.then(done, done);
  });
}
