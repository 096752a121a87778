/**
 * Flags for the benchmark scripts: parsed strictly, `--help` prints the
 * usage and exits 0, a bad flag is one line and exit 2.
 * @module
 */

import { parseArgs, type ParseArgsConfig } from "node:util";

/** Says what is wrong in one line and exits 2. */
export function usageError(message: string): never {
  console.error(`error: ${message} (see --help)`);
  Deno.exit(2);
}

/** Parses `Deno.args` with `options`; `--help` prints `usage` and exits. */
export function flagsOf<T extends NonNullable<ParseArgsConfig["options"]>>(
  options: T,
  usage: string,
) {
  if (Deno.args.includes("--help")) {
    console.log(usage);
    Deno.exit(0);
  }
  try {
    return parseArgs({ args: Deno.args, strict: true, options }).values;
  } catch (error) {
    usageError((error as Error).message);
  }
}
