/**
 * A `deno serve` module for the tests of `startServeWorker`: the second
 * worker to start takes 1.5 s to do so, `GET /slow` is answered after
 * 500 ms, and every answer is logged through the program's buffered sink.
 * `LATE_WORKER_LOCK` names a file that does not exist yet: the first worker
 * creates it, which tells the second that it is late.
 */

import { observeResponses } from "../../src/http/observe_responses.ts";
import { bufferedSink, requestLogger } from "../../src/http/request_log.ts";
import { startServeWorker } from "../../src/program/serve_worker.ts";

function isFirst(lock: string): boolean {
  try {
    Deno.openSync(lock, { createNew: true, write: true }).close();
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return false;
    throw error;
  }
}

const late = !isFirst(Deno.env.get("LATE_WORKER_LOCK")!);

export default await startServeWorker(async (life) => {
  if (late) await new Promise((resolve) => setTimeout(resolve, 1500));
  const sink = bufferedSink();
  life.closeOnStop({ close: () => sink.flush() });
  return {
    fetch: observeResponses(async (req) => {
      if (new URL(req.url).pathname === "/slow") {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      return new Response(late ? "late" : "early");
    }, requestLogger(sink)),
  };
});
