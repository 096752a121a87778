/**
 * `deno task openapi`: writes the OpenAPI document of both services to a
 * file (default `openapi.json`), the copy committed for readers of the repo.
 * @module
 */

import { openApiDocument } from "../src/openapi/openapi_document.ts";

const file = Deno.args[0] ?? "openapi.json";
await Deno.writeTextFile(
  file,
  JSON.stringify(openApiDocument(), null, 2) + "\n",
);
console.log(`written: ${file}`);
