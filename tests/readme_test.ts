/**
 * The README's examples, run in order as a newcomer would: every `console`
 * block's commands against a fresh program (tokens and dates masked), and
 * every TypeScript block type-checked, the client library's run.
 */

import assert from "node:assert/strict";
import { runProgram, startServer } from "./_support/program.ts";

const ROOT = new URL("../", import.meta.url);
const README = await Deno.readTextFile(new URL("README.md", ROOT));

interface Step {
  command: string;
  expected: string[];
}

/** The fenced blocks of `lang`, each as its text. */
function blocks(lang: string): string[] {
  const pattern = new RegExp("^```" + lang + "\\n([^]*?)^```$", "gm");
  return [...README.matchAll(pattern)].map((match) => match[1]);
}

/** A console block as commands (`$ `, with `\` continuations) and the lines each shows. */
function stepsOf(block: string): Step[] {
  const steps: Step[] = [];
  const lines = block.trimEnd().split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("$ ")) {
      let command = line.slice(2);
      while (command.endsWith("\\") && i + 1 < lines.length) {
        command = `${command.slice(0, -1)}${lines[++i].trimStart()}`;
      }
      steps.push({ command, expected: [] });
    } else {
      steps.at(-1)?.expected.push(line);
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

/** Compares what a command printed with what the README shows; a last line `...` stands for the rest. */
function assertShown(step: Step, actual: string[]): void {
  const expected = masked(step.expected);
  const got = masked(actual);
  if (expected.at(-1) === "...") {
    assert.deepEqual(
      got.slice(0, expected.length - 1),
      expected.slice(0, -1),
      step.command,
    );
  } else {
    assert.deepEqual(got, expected, step.command);
  }
}

const SEPARATOR = "<<<readme-step>>>";

/** Runs the commands in one shell, in order, against `base` instead of localhost:8000. */
async function runSteps(steps: Step[], base: string): Promise<string[][]> {
  const script = steps.map((step) =>
    `${step.command.replaceAll("localhost:8000", base)}\necho "${SEPARATOR}"`
  ).join("\n");
  const { stdout, stderr, code } = await new Deno.Command("bash", {
    args: ["-c", script],
    signal: AbortSignal.timeout(30_000),
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const outputs = new TextDecoder().decode(stdout).replaceAll("\r", "")
    .split(`${SEPARATOR}\n`);
  return outputs.slice(0, steps.length).map((out) =>
    out === "" ? [] : out.replace(/\n$/, "").split("\n")
  );
}

Deno.test("the README's console examples, run in order against a fresh program, print what they show", async () => {
  const server = await startServer(["--quiet"]);
  const base = server.url.replace(/^http:\/\//, "").replace(/\/$/, "");
  let ran = 0;
  try {
    for (const block of blocks("console")) {
      const steps = stepsOf(block);
      const [first, ...rest] = steps;
      if (first.command === "deno task start --help") {
        const { stdout, code } = await runProgram(["--help"]);
        assert.equal(code, 0);
        assertShown(first, stdout.trimEnd().split("\n"));
        ran++;
        continue;
      }
      // An endless stream has no output to compare; its format is tested
      // in tests/streams.
      if (steps.some((step) => / -\w*N\w* /.test(step.command))) continue;
      if (first.command.startsWith("deno task start ")) {
        // A block that starts its own program, with the flags it shows.
        const flags = first.command.split(" ").slice(3);
        const own = await startServer(["--quiet", ...flags]);
        try {
          const ownBase = own.url.replace(/^http:\/\//, "").replace(/\/$/, "");
          const outputs = await runSteps(rest, ownBase);
          rest.forEach((step, i) => assertShown(step, outputs[i]));
          ran += steps.length;
        } finally {
          assert.equal(await own.stop(), 0);
        }
        continue;
      }
      const outputs = await runSteps(steps, base);
      steps.forEach((step, i) => assertShown(step, outputs[i]));
      ran += steps.length;
    }
    assert.ok(ran >= 15, `only ${ran} commands ran`);

    // The client library's example, after the shell ones, on the same program.
    const client = blocks("ts").find((code) =>
      code.includes("chat.register(") && !code.includes("events(")
    );
    assert.ok(client, "the client library's example");
    const file = await Deno.makeTempFile({ suffix: ".ts" });
    try {
      await Deno.writeTextFile(
        file,
        client.replaceAll("./mod.ts", new URL("mod.ts", ROOT).href)
          .replaceAll("localhost:8000", base),
      );
      const run = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-net",
          "--config",
          new URL("deno.json", ROOT).pathname,
          file,
        ],
        signal: AbortSignal.timeout(30_000),
      }).output();
      const stderr = new TextDecoder().decode(run.stderr);
      assert.equal(run.code, 0, stderr);
      assert.match(new TextDecoder().decode(run.stdout), /José/);
    } finally {
      await Deno.remove(file);
    }
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

Deno.test("every TypeScript example in the README type-checks", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const files = [];
    for (const [i, code] of blocks("ts").entries()) {
      const file = `${dir}/example_${i}.ts`;
      await Deno.writeTextFile(
        file,
        code.replaceAll(
          /"\.\/((mod|src\/[^"]+)\.ts)"/g,
          (_, path) => JSON.stringify(new URL(path, ROOT).href),
        ),
      );
      files.push(file);
    }
    assert.ok(files.length >= 3);
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "check",
        "--config",
        new URL("deno.json", ROOT).pathname,
        ...files,
      ],
      signal: AbortSignal.timeout(60_000),
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
