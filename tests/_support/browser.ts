/**
 * Real Chromium for the web page's tests: Debian's `chromium` package,
 * driven by `playwright-core` (which downloads no browser of its own).
 */

import { type Browser, chromium, type Page } from "playwright-core";

export type { Browser, Page };

function chromiumPath(): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    for (const name of ["chromium", "chromium-browser"]) {
      try {
        const path = `${dir}/${name}`;
        if (Deno.statSync(path).isFile) return path;
      } catch {
        // Not in this directory.
      }
    }
  }
  return undefined;
}

const executablePath = chromiumPath();

/** Why the browser tests cannot run here, or `undefined` when they can. */
export const browserMissing = executablePath === undefined
  ? "chromium is not on PATH (apt-get install chromium)"
  : undefined;
if (browserMissing) {
  console.warn(`\n!!! SKIPPING every browser test: ${browserMissing} !!!\n`);
}

/** Starts a headless Chromium; the caller closes it. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath,
    // Containers run tests as root, where Chromium's sandbox cannot start.
    chromiumSandbox: false,
    timeout: 30_000,
  });
}

/** What a page did that a test wants to see none of. */
export interface PageWatch {
  /** Requests to any origin but the allowed ones. */
  foreignRequests: string[];
  /** Uncaught exceptions and console errors (CSP violations among them). */
  errors: string[];
}

const HTTP_STATUS_LOG =
  /^Failed to load resource: the server responded with a status of 4\d\d/;

/** Records a page's requests off `origins` and its script errors. */
export function watchPage(page: Page, origins: string[]): PageWatch {
  const watch: PageWatch = { foreignRequests: [], errors: [] };
  page.on("request", (request) => {
    const url = request.url();
    if (url.startsWith("data:")) return;
    if (!origins.includes(new URL(url).origin)) {
      watch.foreignRequests.push(url);
    }
  });
  page.on("pageerror", (error) => watch.errors.push(String(error)));
  page.on("console", (message) => {
    // Chromium logs every 4xx answer as a console error; a refusal the page
    // shows is no script error.
    const text = message.text();
    if (message.type() === "error" && !HTTP_STATUS_LOG.test(text)) {
      watch.errors.push(text);
    }
  });
  return watch;
}

/** A test that needs Chromium: ignored, and said so, where it is missing. */
export const browserTest = (name: string, fn: () => Promise<void>): void =>
  Deno.test({
    name,
    ignore: browserMissing !== undefined,
    // Playwright's own connections outlive a test's end.
    sanitizeOps: false,
    sanitizeResources: false,
    fn,
  });
