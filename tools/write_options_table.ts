/**
 * `deno task docs:options`: writes the program's options table (from
 * `src/program/config.ts`) into every page of the docs that marks a place
 * for it, between `<!-- options -->` and `<!-- /options -->`, then formats
 * those pages. The tests fail when a marked table is not the current one,
 * or when no page marks one.
 * @module
 */

import { OPTIONS } from "../src/program/config.ts";
import { optionsMarkdown } from "../src/program/options.ts";

/** The comments a page puts around the options table. */
export const MARKERS = { start: "<!-- options -->", end: "<!-- /options -->" };

const ROOT = new URL("../", import.meta.url);

/** The Markdown pages that may hold the table: the README and `docs/`. */
export async function docPages(): Promise<URL[]> {
  const pages = [new URL("README.md", ROOT)];
  const walk = async (dir: URL) => {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isDirectory) await walk(new URL(`${entry.name}/`, dir));
      else if (entry.name.endsWith(".md")) {
        pages.push(new URL(entry.name, dir));
      }
    }
  };
  await walk(new URL("docs/", ROOT));
  return pages;
}

const regionPattern = () =>
  new RegExp(`(${MARKERS.start})([^]*?)(${MARKERS.end})`, "g");

/** The text between each pair of markers in `page`. */
export function marked(page: string): string[] {
  return [...page.matchAll(regionPattern())].map(([, , text = ""]) => text);
}

/** `page` with `table` between each pair of markers. */
export function withTable(page: string, table: string): string {
  return page.replace(
    regionPattern(),
    (_, start, _old, end) => `${start}\n\n${table}\n\n${end}`,
  );
}

/** The rows of a Markdown table as cells, whatever its column padding. */
export function tableCells(markdown: string): string[][] {
  return markdown.split("\n")
    .filter((line) => line.trimStart().startsWith("|"))
    .map((line) =>
      line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "")
        .split(/(?<!\\)\|/).map((cell) => cell.trim())
    )
    .filter((cells) => !cells.every((cell) => /^:?-+:?$/.test(cell)));
}

if (import.meta.main) {
  const table = optionsMarkdown(OPTIONS);
  const written: string[] = [];
  for (const page of await docPages()) {
    const text = await Deno.readTextFile(page);
    if (marked(text).length === 0) continue;
    await Deno.writeTextFile(page, withTable(text, table));
    written.push(page.pathname);
  }
  if (written.length === 0) {
    console.error(
      `error: no page of the docs marks a place for the table (${MARKERS.start} ... ${MARKERS.end})`,
    );
    Deno.exit(1);
  }
  // The docs are formatted as deno fmt would, which pads the table.
  const fmt = await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet", ...written],
  }).output();
  if (!fmt.success) Deno.exit(1);
  console.log(`written: ${written.join(", ")}`);
}
