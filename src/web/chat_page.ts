/**
 * `GET /chat`: one self-contained page whose policy allows only its inlined
 * style and script, by hash, so no injected markup could run.
 * @module
 */

import { createHash } from "node:crypto";
import { precompressed } from "../http/compression.ts";
import type { Routes } from "../http/router.ts";
import template from "./chat.html" with { type: "text" };
import style from "./chat.css" with { type: "text" };
import pageScript from "./chat.bundle.js" with { type: "text" };

/** The page's content type. */
export const HTML_CONTENT_TYPE = "text/html; charset=UTF-8";

function sha256Source(text: string): string {
  return `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
}

function buildPage(quote: boolean): (req: Request) => Response {
  // The hashes cover the exact text between the tags, indentation included.
  const styleText = `\n${style}\n`;
  const scriptText = `\n${pageScript}\n`;
  // Functions as replacements, so no `$` in the sources is read as a pattern.
  let html = template
    .replace(/<style>[^<]*<\/style>/, () => `<style>${styleText}</style>`)
    .replace(
      /<script type="module">[^<]*<\/script>/,
      () => `<script type="module">${scriptText}</script>`,
    );
  if (!quote) html = html.replace("data-quote-panel", "hidden");
  const policy = [
    "default-src 'none'",
    `script-src ${sha256Source(scriptText)}`,
    `style-src ${sha256Source(styleText)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return precompressed(html, {
    "content-type": HTML_CONTENT_TYPE,
    "content-security-policy": policy,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
  });
}

/** The chat page's route; the quote shows only when `quote` says its service is served too. */
export function chatPageRoutes(options: { quote: boolean }): Routes {
  // Built and compressed once, on the first request.
  let page: ((req: Request) => Response) | undefined;
  return {
    "/chat": { GET: (req) => (page ??= buildPage(options.quote))(req) },
  };
}
