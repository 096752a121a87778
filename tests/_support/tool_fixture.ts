/** A tiny package in a temporary directory, with the repository's check tools, to run them on. */

const TOOLS = new URL("../../tools/", import.meta.url);

/** Writes `files` (path to text) and the tools into a new directory; returns its path. */
export async function fixture(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "lms-tools-" });
  await Deno.mkdir(`${dir}/tools`);
  for (
    const name of [
      "entries.ts",
      "check_import_cycles.ts",
      "check_doc_examples.ts",
    ]
  ) {
    await Deno.copyFile(new URL(name, TOOLS), `${dir}/tools/${name}`);
  }
  const all: Record<string, string> = {
    "deno.json": JSON.stringify({
      name: "@test/fixture",
      version: "0.0.0",
      exports: { ".": "./mod.ts" },
    }),
    "main.ts": "",
    "serve.ts": "",
    "chat.ts": "",
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    const parent = path.slice(0, path.lastIndexOf("/") + 1);
    if (parent !== "") {
      await Deno.mkdir(`${dir}/${parent}`, { recursive: true });
    }
    await Deno.writeTextFile(`${dir}/${path}`, text);
  }
  return dir;
}

/** Runs the tool `name` in `dir` as `deno task check` does; its exit code and output. */
export async function runTool(
  dir: string,
  name: string,
): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-run", "--allow-read", `tools/${name}`],
    cwd: dir,
    env: { NO_COLOR: "1" },
    signal: AbortSignal.timeout(60_000),
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code, out: decode(stdout) + decode(stderr) };
}
