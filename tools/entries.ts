/**
 * The package's entries, as `deno.json` `exports` lists them, and the
 * program's, for the checks in this folder.
 * @module
 */

import config from "../deno.json" with { type: "json" };

const root = new URL("../", import.meta.url);

/** The library entries (`exports`), as absolute file URLs. */
export const LIBRARY_ENTRIES: string[] = Object.values(config.exports).map(
  (path) => new URL(path, root).href,
);

/** The programs' entries, as absolute file URLs. */
export const PROGRAM_ENTRIES: string[] = ["main.ts", "serve.ts", "chat.ts"]
  .map((path) => new URL(path, root).href);

/** Runs `deno` with `args` and parses what it prints as JSON. */
export async function denoJson(args: string[]): Promise<unknown> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`deno ${args.join(" ")} failed`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}
