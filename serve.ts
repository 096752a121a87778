/**
 * The entry for `deno serve`, which owns the socket and can run one worker
 * per core (`deno serve --parallel`). It takes no flags: the `LMS_*`
 * variables of the option table (`src/program/config.ts`, listed by
 * `deno task start --help`) stand for them.
 *
 * ```sh
 * LMS_STORE=redis://127.0.0.1:6379/0 deno serve --parallel --allow-net --allow-env serve.ts
 * ```
 * @module
 */

import { configFromEnv, readEnv, UsageError } from "./src/program/config.ts";
import { programLog } from "./src/program/program_log.ts";
import { setUpProgram } from "./src/program/program.ts";
import {
  startServeWorker,
  type WorkerLife,
} from "./src/program/serve_worker.ts";
import { StoreUnavailableError } from "./src/store/store.ts";

/**
 * Whether other workers of this process run this module too. Workers of
 * `deno serve --parallel` share the process, so they hear one another on a
 * channel named after it; the channel stays open so a late worker hears the
 * earlier ones.
 */
async function hasPeerWorkers(life: WorkerLife): Promise<boolean> {
  const channel = new BroadcastChannel(`lms-serve-${Deno.pid}`);
  life.closeOnStop(channel);
  let peers = 0;
  channel.onmessage = (event) => {
    peers++;
    if (event.data === "hello") channel.postMessage("here");
  };
  channel.postMessage("hello");
  await new Promise((resolve) => setTimeout(resolve, 200));
  return peers > 0;
}

function fail(message: string): never {
  console.error(`error: ${message}`);
  Deno.exit(1);
}

/** Configures from the environment and opens the store; exits 1 when it cannot. */
async function start(life: WorkerLife): Promise<Deno.ServeDefaultExport> {
  if (Deno.args.length > 0) {
    // `deno task serve:parallel --port=N` hands the flag to this module, not
    // to deno serve: listening elsewhere than asked would be a surprise.
    console.error(
      `error: serve.ts takes no flags (got ${
        Deno.args.join(" ")
      }): set the address with DENO_SERVE_ADDRESS=tcp:HOST:PORT and the options with LMS_* variables, as in DENO_SERVE_ADDRESS=tcp:127.0.0.1:8080 LMS_STORE=redis://127.0.0.1:6379/0 deno task serve:parallel (docs/operating.md, "One worker per core")`,
    );
    Deno.exit(2);
  }
  try {
    const config = configFromEnv(readEnv);
    if (config.store === "memory" && await hasPeerWorkers(life)) {
      fail(
        "deno serve --parallel needs a shared store: each worker would keep its own users and messages. Set LMS_STORE=redis://HOST:PORT/DB.",
      );
    }
    const program = await setUpProgram(config, programLog(config.logFormat), {
      stopSignal: life.signal,
    });
    life.closeOnStop(program.store);
    life.closeOnStop({ close: program.flushLog });
    return {
      fetch: program.handler,
      onListen: (addr) => program.listening(addr as Deno.NetAddr),
    };
  } catch (error) {
    if (error instanceof UsageError || error instanceof StoreUnavailableError) {
      fail(error.message);
    }
    throw error;
  }
}

/** The handler `deno serve` runs, announced with the program's banner. */
export default await startServeWorker(start);
