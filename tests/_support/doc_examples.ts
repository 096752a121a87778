/**
 * Runs a documentation page's examples as a newcomer would: every `console`
 * block in the order the page shows it, against a program started afresh
 * for that page, each command's output compared with the lines shown under
 * it (tokens and dates masked). Used by `tests/docs_test.ts`.
 *
 * Conventions the pages follow (CONTRIBUTING.md states them for authors):
 * - A block whose first command is `deno task start FLAGS` runs its other
 *   commands against a program of its own, started with those flags.
 * - A command that follows an event stream (`curl -N`) is stopped after two
 *   seconds; the block shows what arrived by then, ending in `...`.
 * - A last shown line `...` stands for the rest of the output; blank lines
 *   at the end of the output are not compared.
 * - Every command must exit 0 (a stream stopped by its time limit aside).
 * - A `ts` block with `title="NAME"` is written to the file NAME in the
 *   directory the commands run in, so a later `deno run NAME` runs it.
 * - `localhost:8000` in commands and titled files means the page's program.
 */

import assert from "node:assert/strict";
import { type RunningServer, startServer } from "./program.ts";

const ROOT = new URL("../../", import.meta.url);

/** One fenced code block of a Markdown page. */
export interface Fence {
  /** The first word of the info string: `console`, `ts`, `sh`, ... */
  lang: string;
  /** The other words of the info string, `title="x.ts"` as `title` → `x.ts`. */
  attributes: Map<string, string>;
  /** The block's text, its fence's indentation removed, ending in a newline. */
  text: string;
  /** The line of the opening fence, counted from 1. */
  line: number;
}

/**
 * Every fenced block of `markdown` in order, those indented inside list
 * items included (a block the examples' test cannot see is one it cannot
 * run).
 */
export function fencesOf(markdown: string): Fence[] {
  const fences: Fence[] = [];
  /** The fence being read: its indentation, how it closes, its lines so far. */
  let open:
    | { indent: string; close: RegExp; body: string[]; fence: Fence }
    | undefined;
  const finish = () => {
    if (open === undefined) return;
    open.fence.text = open.body.map((line) => `${line}\n`).join("");
    fences.push(open.fence);
    open = undefined;
  };
  for (const [i, line] of markdown.split("\n").entries()) {
    if (open !== undefined) {
      if (open.close.test(line)) finish();
      else {
        open.body.push(
          line.startsWith(open.indent) ? line.slice(open.indent.length) : line,
        );
      }
      continue;
    }
    const [, indent = "", ticks, info = ""] =
      line.match(/^( *)(`{3,})([^`]*)$/) ?? [];
    if (ticks === undefined) continue;
    const [lang = "", ...words] = info.trim().split(/\s+/);
    const attributes = new Map<string, string>();
    for (const word of words) {
      const [key = "", value = ""] = word.split("=");
      attributes.set(key, value.replace(/^"(.*)"$/, "$1"));
    }
    open = {
      indent,
      close: new RegExp(`^ *${ticks}\`* *$`),
      body: [],
      fence: { lang, attributes, text: "", line: i + 1 },
    };
  }
  // A fence left open runs to the end of the page.
  finish();
  return fences;
}

/** A command (`$ `, with `\` continuations) and the lines shown under it. */
export interface Step {
  command: string;
  expected: string[];
}

/** A console block as its commands and what each shows. */
export function stepsOf(block: string): Step[] {
  const steps: Step[] = [];
  /** The command whose last line so far ends in `\\`: the next line goes on. */
  let continued: Step | undefined;
  for (const line of block.trimEnd().split("\n")) {
    if (continued !== undefined) {
      continued.command = `${
        continued.command.slice(0, -1)
      }${line.trimStart()}`;
      if (!continued.command.endsWith("\\")) continued = undefined;
    } else if (line.startsWith("$ ")) {
      const step: Step = { command: line.slice(2), expected: [] };
      steps.push(step);
      if (step.command.endsWith("\\")) continued = step;
    } else {
      const last = steps.at(-1);
      assert.ok(last !== undefined, `output before any command: ${line}`);
      last.expected.push(line);
    }
  }
  return steps;
}

/** What varies from run to run: tokens, dates. */
function masked(lines: string[]): string[] {
  return lines.map((line) =>
    line.replace(/[0-9a-f]{40}/g, "<token>").replace(
      /^date: .*/i,
      "date: <date>",
    )
  );
}

function withoutTrailingBlanks(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && lines[end - 1] === "") end--;
  return lines.slice(0, end);
}

/** Compares what a command printed with what the page shows; a last line `...` stands for the rest. */
function assertShown(step: Step, actual: string[], where: string): void {
  const expected = masked(step.expected);
  const got = masked(actual);
  const message = `${where}: $ ${step.command}`;
  if (expected.at(-1) === "...") {
    assert.deepEqual(
      got.slice(0, expected.length - 1),
      expected.slice(0, -1),
      message,
    );
  } else {
    // Blank lines at the end are not compared: a page cannot show them.
    assert.deepEqual(withoutTrailingBlanks(got), expected, message);
  }
}

const SEPARATOR = "<<<doc-step>>>";
/** How long a command that follows an event stream is given before it is stopped. */
const STREAM_SECONDS = 2;
/** The status `timeout` exits with when it stopped the command. */
const TIMED_OUT = 124;

function isStream(command: string): boolean {
  return /\bcurl\b/.test(command) && / -\w*N\w*( |$)/.test(command);
}

/** `host:port` of a running program, what stands in for `localhost:8000`. */
function hostOf(server: RunningServer): string {
  return new URL(server.url).host;
}

/**
 * Runs the commands in one shell in `cwd`, in order, against `host`, and
 * compares what each printed on standard output with what the page shows.
 * A command that fails (a stream stopped by its time limit aside) fails the
 * page with what it wrote on standard error, since its output alone may
 * look right.
 */
async function runSteps(
  steps: Step[],
  host: string,
  cwd: string,
  where: string,
): Promise<void> {
  const script = steps.map((step) => {
    const command = step.command.replaceAll("localhost:8000", host);
    const bounded = isStream(command)
      ? `timeout ${STREAM_SECONDS} ${command}`
      : command;
    return `${bounded}\necho "$?${SEPARATOR}"`;
  }).join("\n");
  const bin = Deno.execPath().replace(/\/[^/]*$/, "");
  const { stdout, stderr } = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd,
    env: { PATH: `${bin}:${Deno.env.get("PATH") ?? ""}`, NO_COLOR: "1" },
    signal: AbortSignal.timeout(60_000),
  }).output();
  const errors = new TextDecoder().decode(stderr);
  const outputs = new TextDecoder().decode(stdout).replaceAll("\r", "")
    .split(`${SEPARATOR}\n`);
  assert.equal(outputs.length, steps.length + 1, `${where}: ${errors}`);
  for (const [i, step] of steps.entries()) {
    const [, out = "", status] = outputs[i]?.match(/^([^]*?)(\d+)$/) ?? [];
    const allowed = isStream(step.command) ? [0, TIMED_OUT] : [0];
    assert.ok(
      allowed.includes(Number(status)),
      `${where}: $ ${step.command} exited ${status}\n${errors}`,
    );
    const shown = out === "" ? [] : out.replace(/\n$/, "").split("\n");
    assertShown(step, shown, where);
  }
}

/** What a checkout holds that its copy need not: git, `deno task compile`'s output. */
const NOT_COPIED = /^(\..*|dist)$/;

/** Copies what `from` holds into the directory `to`, all but {@linkcode NOT_COPIED}. */
async function copyInto(from: string, to: string): Promise<void> {
  for await (const entry of Deno.readDir(from)) {
    if (NOT_COPIED.test(entry.name)) continue;
    if (entry.isDirectory) {
      await Deno.mkdir(`${to}/${entry.name}`);
      await copyInto(`${from}/${entry.name}`, `${to}/${entry.name}`);
    } else if (entry.isFile) {
      await Deno.copyFile(`${from}/${entry.name}`, `${to}/${entry.name}`);
    }
  }
}

/**
 * A copy of the checkout, so `deno task ...` and `deno run example.ts` work
 * there as in the repository, while files the page writes stay out of it.
 * Links would not do: Deno follows them out of the directory and asks for
 * read access to the files an import `with { type: "text" }` names.
 */
async function workspace(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "lms-docs-" });
  await copyInto(ROOT.pathname, dir);
  return dir;
}

/** The flags of a block's first command when it starts a program of its own. */
function ownProgramFlags(command: string): string[] | undefined {
  const words = command.split(" ");
  if (words.slice(0, 3).join(" ") !== "deno task start") return undefined;
  // Anything but flags (a redirection, a pipe) is a command to run as is.
  const flags = words.slice(3);
  if (!flags.every((word) => word.startsWith("--"))) return undefined;
  return flags.includes("--help") ? undefined : flags;
}

/**
 * Runs the console examples of the page `markdown` (named `page` in
 * failures) in order, against a fresh program, and returns how many
 * commands ran. Throws at the first command whose output differs.
 */
export async function runPageExamples(
  page: string,
  markdown: string,
): Promise<number> {
  const fences = fencesOf(markdown);
  if (!fences.some((fence) => fence.lang === "console")) return 0;
  const cwd = await workspace();
  let program: RunningServer | undefined;
  const pageHost = async () =>
    hostOf(program ??= await startServer(["--quiet"]));
  let ran = 0;
  try {
    for (const fence of fences) {
      const where = `${page}:${fence.line}`;
      const title = fence.attributes.get("title");
      if (fence.lang === "ts" && title) {
        const host = await pageHost();
        await Deno.writeTextFile(
          `${cwd}/${title}`,
          fence.text.replaceAll("localhost:8000", host),
          { createNew: true },
        );
        continue;
      }
      if (fence.lang !== "console") continue;
      const steps = stepsOf(fence.text);
      const [first, ...rest] = steps;
      assert.ok(first, `${where}: a console block with no command`);
      const flags = ownProgramFlags(first.command);
      if (flags === undefined) {
        await runSteps(steps, await pageHost(), cwd, where);
      } else {
        assert.deepEqual(
          first.expected,
          [],
          `${where}: a program started for a block shows no output`,
        );
        const own = await startServer(["--quiet", ...flags]);
        try {
          await runSteps(rest, hostOf(own), cwd, where);
        } finally {
          assert.equal(await own.stop(), 0);
        }
      }
      ran += steps.length;
    }
  } finally {
    if (program) assert.equal(await program.stop(), 0);
    await Deno.remove(cwd, { recursive: true });
  }
  return ran;
}

/** The documentation pages whose examples run: the README first, the other top-level pages, then every page of `docs/`. */
export async function documentationPages(): Promise<string[]> {
  const markdownIn = async (dir: string, prefix: string) => {
    const names: string[] = [];
    for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
      if (entry.isFile && entry.name.endsWith(".md")) {
        names.push(`${prefix}${entry.name}`);
      }
    }
    return names.sort();
  };
  const top = await markdownIn("./", "");
  return [
    "README.md",
    ...top.filter((page) => page !== "README.md"),
    ...await markdownIn("docs/", "docs/"),
  ];
}
