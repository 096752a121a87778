/**
 * Fails when a public export of a package entry has no `@example` in its
 * JSDoc. `deno test --doc` runs the examples; this makes sure there is one
 * to run. Run by `deno task check`.
 * @module
 */

import { denoJson, LIBRARY_ENTRIES } from "./entries.ts";

interface DocSymbol {
  name: string;
  declarations: { kind: string; jsDoc?: { tags?: { kind: string }[] } }[];
}

const doc = await denoJson(["doc", "--json", ...LIBRARY_ENTRIES]) as {
  nodes: Record<string, { symbols: DocSymbol[] }>;
};
const missing: string[] = [];
let count = 0;
for (const [entry, { symbols }] of Object.entries(doc.nodes)) {
  for (const symbol of symbols) {
    // A symbol one entry re-exports from another is documented, and
    // checked, where that other entry declares it.
    if (symbol.declarations.every((d) => d.kind === "reference")) continue;
    count++;
    const tags = symbol.declarations.flatMap((d) => d.jsDoc?.tags ?? []);
    if (!tags.some((tag) => tag.kind === "example")) {
      missing.push(`${new URL(entry).pathname}: ${symbol.name}`);
    }
  }
}
if (missing.length > 0) {
  console.error(
    `public exports without an @example:\n  ${missing.join("\n  ")}`,
  );
  Deno.exit(1);
}
console.log(`every one of ${count} public exports has an @example`);
