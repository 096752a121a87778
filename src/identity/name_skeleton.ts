/**
 * "One name, one look": UTS #39 skeletons (docs/architecture.md, "Name skeletons").
 * @module
 */

import table from "./confusables.json" with { type: "json" };

const prototypes = new Map<string, string>(Object.entries(table));
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * @example A Cyrillic "а" and a combining accent look like Latin letters
 * ```ts
 * import assert from "node:assert/strict";
 * import { skeleton } from "./name_skeleton.ts";
 * assert.equal(skeleton("\u0430dmin"), skeleton("admin"));
 * assert.equal(skeleton("cafe\u0301"), skeleton("caf\u00e9"));
 * assert.notEqual(skeleton("alice"), skeleton("bob"));
 * ```
 */
export function skeleton(text: string): string {
  let out = "";
  for (const c of text.normalize("NFD").replace(IGNORABLE, "")) {
    out += prototypes.get(c) ?? c;
  }
  return out.normalize("NFD");
}

/**
 * The skeleton of the NFKC form: the confusables data leaves compatibility letters (`ｒ`) to NFKC.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lookOf } from "./name_skeleton.ts";
 * assert.equal(lookOf("\uff52qzt"), lookOf("rqzt"));
 * assert.equal(lookOf("\u0430dmin"), lookOf("admin"));
 * ```
 */
export function lookOf(name: string): string {
  return skeleton(name.normalize("NFKC"));
}

export function confusablePairs(): IterableIterator<[string, string]> {
  return prototypes.entries();
}
