/**
 * The documentation's examples, run as a newcomer would: on every page (the
 * README, the other top-level pages, docs/), every `console` block in order
 * against a program started for that page, each command's output compared
 * with what the page shows; every TypeScript block type-checked.
 */

import assert from "node:assert/strict";
import {
  documentationPages,
  fencesOf,
  runPageExamples,
  stepsOf,
} from "./_support/doc_examples.ts";

const ROOT = new URL("../", import.meta.url);

for (const page of await documentationPages()) {
  const markdown = await Deno.readTextFile(new URL(page, ROOT));
  const shown = fencesOf(markdown).filter((fence) => fence.lang === "console")
    .reduce((sum, fence) => sum + stepsOf(fence.text).length, 0);
  if (shown === 0) continue;
  Deno.test(`${page}: its console examples, run in order against a fresh program, print what they show`, async () => {
    assert.equal(await runPageExamples(page, markdown), shown);
  });
}

Deno.test("the pages with examples to run are found, README's first", async () => {
  const pages = await documentationPages();
  assert.equal(pages[0], "README.md");
  for (
    const page of [
      "CONTRIBUTING.md",
      "docs/api.md",
      "docs/clients.md",
      "docs/operating.md",
    ]
  ) {
    assert.ok(pages.includes(page), page);
  }
});

Deno.test("every TypeScript example of every page type-checks", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const files = [];
    for (const page of await documentationPages()) {
      const markdown = await Deno.readTextFile(new URL(page, ROOT));
      for (const fence of fencesOf(markdown)) {
        if (fence.lang !== "ts" || fence.attributes.has("ignore")) continue;
        const file = `${dir}/${page.replaceAll("/", "_")}_${fence.line}.ts`;
        await Deno.writeTextFile(
          file,
          fence.text.replaceAll(
            /"\.\/((mod|src\/[^"]+)\.ts)"/g,
            (_, path) => JSON.stringify(new URL(path, ROOT).href),
          ),
        );
        files.push(file);
      }
    }
    assert.ok(files.length >= 3, `only ${files.length} examples`);
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

Deno.test("fences are found inside list items, with their info string's attributes", () => {
  const page = [
    "- a step:",
    "",
    "  ```console",
    "  $ echo hi",
    "  hi",
    "  ```",
    "",
    '```ts title="example.ts"',
    "console.log(1);",
    "```",
    "````md",
    "```console",
    "````",
  ].join("\n");
  const fences = fencesOf(page);
  assert.deepEqual(
    fences.map(({ lang, text, line }) => ({ lang, text, line })),
    [
      { lang: "console", text: "$ echo hi\nhi\n", line: 3 },
      { lang: "ts", text: "console.log(1);\n", line: 8 },
      { lang: "md", text: "```console\n", line: 11 },
    ],
  );
  assert.equal(fences[1]?.attributes.get("title"), "example.ts");
});

Deno.test("a page whose shown output differs from what its command prints fails", async () => {
  const page = [
    "```console",
    "$ curl -s localhost:8000/quote",
    '"Hello, world!"',
    "```",
  ].join("\n");
  await assert.rejects(
    runPageExamples("wrong.md", page),
    (error: Error) =>
      error instanceof assert.AssertionError &&
      error.message.includes("wrong.md:1"),
  );
});

Deno.test("a command that fails fails the page, though it printed what was shown", async () => {
  // An example that cannot run prints nothing on standard output, which a
  // page could show as an empty output.
  const page = ["```console", "$ cat missing.txt", "```"].join("\n");
  await assert.rejects(
    runPageExamples("failing.md", page),
    (error: Error) =>
      error instanceof assert.AssertionError &&
      error.message.includes("exited 1"),
  );
});

// The README once showed `id: 6` and `bob` in an event stream where its
// earlier examples give `id: 1` and `alice`: stream commands and blocks
// inside list items were skipped, so nothing compared them.
const streamPage = (id: number) =>
  [
    "```console",
    '$ T=$(curl -s -X POST localhost:8000/users -d alice | sed \'s/.*"token":"\\(.*\\)".*/\\1/\')',
    `$ curl -s -X POST localhost:8000/ -H "X-Messaging-Token: $T" -d '{"text":"hi"}'`,
    '{"status":"added"}',
    "```",
    "",
    "- **Streams.** A reader sees what was posted:",
    "",
    "  ```console",
    "  $ curl -sN localhost:8000/events",
    "  retry: 1000",
    "",
    `  id: ${id}`,
    "  event: message",
    '  data: {"text":"hi","color":"black","user":"alice"}',
    "",
    "  ...",
    "  ```",
  ].join("\n");

Deno.test("a stream example inside a list item is run and compared", async () => {
  assert.equal(await runPageExamples("right.md", streamPage(1)), 3);
  await assert.rejects(
    runPageExamples("stale.md", streamPage(6)),
    assert.AssertionError,
  );
});
