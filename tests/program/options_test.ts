/**
 * What comes from the option table besides the parser: `--help`, the
 * docs' table, and the variables each task lets the program read.
 */
import assert from "node:assert/strict";
import config from "../../deno.json" with { type: "json" };
import { OPTIONS, USAGE, WATCH_VARIABLE } from "../../src/program/config.ts";
import { optionsMarkdown, variablesOf } from "../../src/program/options.ts";
import { REDIS_CLIENT_VARIABLES } from "../../src/program/open_store.ts";
import {
  docPages,
  marked,
  MARKERS,
  tableCells,
  withTable,
} from "../../tools/write_options_table.ts";

const sorted = (names: readonly string[]) => [...names].sort();

/** The variables a task's `--allow-env` lets the program read. */
function allowedEnv(task: keyof typeof config.tasks): string[] {
  const flag = config.tasks[task].split(" ").find((word) =>
    word.startsWith("--allow-env=")
  );
  assert.ok(flag, `${task} names the variables it may read`);
  return flag.slice("--allow-env=".length).split(",");
}

Deno.test("deno serve may read exactly the variables it reads: the table's, and the Redis client's", () => {
  assert.deepEqual(
    sorted(allowedEnv("serve:parallel")),
    sorted([...variablesOf(OPTIONS, "serve"), ...REDIS_CLIENT_VARIABLES]),
  );
});

Deno.test("start, dev and compile may read exactly the fallbacks of their flags, and the Redis client's variables", () => {
  const start = [...variablesOf(OPTIONS, "start"), ...REDIS_CLIENT_VARIABLES];
  assert.deepEqual(sorted(allowedEnv("start")), sorted(start));
  assert.deepEqual(sorted(allowedEnv("compile")), sorted(start));
  assert.deepEqual(
    sorted(allowedEnv("dev")),
    sorted([...start, WATCH_VARIABLE]),
  );
});

Deno.test("every variable is named after its flag (PORT aside) and read by an entry", () => {
  for (const option of Object.values(OPTIONS)) {
    const variable = "variable" in option ? option.variable : undefined;
    if (!variable) continue;
    assert.ok(variable.serve || variable.fallback, variable.name);
    if (variable.name === "PORT") continue;
    assert.equal(
      variable.name,
      `LMS_${option.flag.toUpperCase().replaceAll("-", "_")}`,
    );
  }
});

Deno.test("--help lists every flag once, in lines of at most 80 characters", () => {
  for (const option of Object.values(OPTIONS)) {
    const listed = USAGE.split("\n").filter((line) =>
      new RegExp(`^  --${option.flag}(=|\\s|$)`).test(line)
    );
    assert.equal(listed.length, 1, option.flag);
  }
  for (const line of USAGE.split("\n")) {
    assert.ok(line.length <= 80, line);
  }
  for (const name of variablesOf(OPTIONS, "serve")) {
    assert.match(USAGE, new RegExp(`\\b${name}\\b`));
  }
});

Deno.test("the docs' table has one row per option: its flag, variable, who reads it, default, values and help", () => {
  const [header, ...rows] = tableCells(optionsMarkdown(OPTIONS));
  assert.deepEqual(header, [
    "Flag",
    "Variable",
    "Read by",
    "Default",
    "Values",
    "What it does",
  ]);
  const options = Object.values(OPTIONS);
  assert.equal(rows.length, options.length);
  options.forEach((option, i) => {
    const cells = rows[i] ?? [];
    assert.match(cells[0] ?? "", new RegExp(`^\`--${option.flag}[=\`]`));
    assert.equal(
      cells[1],
      "variable" in option && option.variable
        ? `\`${option.variable.name}\``
        : "",
    );
    assert.equal(cells[3], option.shownDefault);
    assert.equal(cells[5], option.help);
  });
});

Deno.test("every table the docs mark is the current one, and some page marks one", async () => {
  const expected = tableCells(optionsMarkdown(OPTIONS));
  let found = 0;
  for (const page of await docPages()) {
    for (const region of marked(await Deno.readTextFile(page))) {
      found++;
      assert.deepEqual(
        tableCells(region),
        expected,
        `${page.pathname}: run deno task docs:options`,
      );
    }
  }
  assert.ok(
    found > 0,
    `no page marks the options table with ${MARKERS.start} ${MARKERS.end}`,
  );
});

Deno.test("writing the table into a page replaces what its markers hold, and only that", () => {
  const page =
    `# Options\n\nBefore.\n\n${MARKERS.start}\nold\n${MARKERS.end}\n\nAfter.\n`;
  const written = withTable(page, "| a |\n| - |\n| b |");
  assert.equal(
    written,
    `# Options\n\nBefore.\n\n${MARKERS.start}\n\n| a |\n| - |\n| b |\n\n${MARKERS.end}\n\nAfter.\n`,
  );
  assert.deepEqual(marked(written).map(tableCells), [[["a"], ["b"]]]);
  assert.equal(withTable("no markers", "| a |"), "no markers");
});
