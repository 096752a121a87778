/**
 * `deno task audit`: Lighthouse (12.2.3, the last to run on Node 20) on the
 * chat page served by the real program, mobile and desktop, in the
 * system's Chromium. Prints each category's score and every audit that
 * failed; exits 1 when a score is under 95. `--root=DIR` audits another
 * checkout (an older commit, for a before and after). A measurement, not a test: it
 * needs npx and the network for its first run, and its timings vary.
 * @module
 */

import { startServer } from "../tests/_support/program.ts";

const LIGHTHOUSE = "lighthouse@12.2.3";
const CATEGORIES = ["performance", "accessibility", "best-practices"];
const GOAL = 95;
const CHROME = Deno.env.get("CHROME_PATH") ?? "/usr/bin/chromium";

interface Report {
  categories: Record<string, { title: string; score: number | null }>;
  audits: Record<
    string,
    {
      title: string;
      score: number | null;
      scoreDisplayMode: string;
      displayValue?: string;
    }
  >;
}

async function lighthouse(url: string, desktop: boolean): Promise<Report> {
  const output = await Deno.makeTempFile({ suffix: ".json" });
  try {
    const { success, stderr } = await new Deno.Command("npx", {
      args: [
        "--yes",
        LIGHTHOUSE,
        url,
        "--quiet",
        "--output=json",
        `--output-path=${output}`,
        `--only-categories=${CATEGORIES.join(",")}`,
        `--chrome-path=${CHROME}`,
        // Containers run as root, where Chromium's sandbox cannot start.
        "--chrome-flags=--headless=new --no-sandbox",
        ...(desktop ? ["--preset=desktop"] : []),
      ],
      env: { CHROME_PATH: CHROME },
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!success) throw new Error(new TextDecoder().decode(stderr));
    return JSON.parse(await Deno.readTextFile(output));
  } finally {
    await Deno.remove(output);
  }
}

/**
 * Five messages in the history first, as on a service in use: the page's
 * catch-up then arrives after the first paint, where a layout shift shows.
 */
async function seed(base: string) {
  const reg = await fetch(`${base}users`, { method: "POST", body: "Audit" });
  const { token } = await reg.json();
  for (let i = 1; i <= 5; i++) {
    const res = await fetch(base, {
      method: "POST",
      headers: { "x-messaging-token": token },
      body: JSON.stringify({ text: `Message ${i} of the audit's history.` }),
    });
    await res.body?.cancel();
  }
}

/** Prints one run; true when every category reaches the goal. */
function show(label: string, report: Report): boolean {
  let ok = true;
  const scores = CATEGORIES.map((id) => {
    const score = Math.round((report.categories[id]?.score ?? 0) * 100);
    if (score < GOAL) ok = false;
    return `${id} ${score}`;
  });
  console.log(`${label}: ${scores.join(", ")}`);
  for (const [id, audit] of Object.entries(report.audits)) {
    const scored = ["binary", "numeric", "metricSavings"]
      .includes(audit.scoreDisplayMode);
    if (scored && audit.score !== null && audit.score < 0.9) {
      const value = audit.displayValue ? ` (${audit.displayValue})` : "";
      console.log(`  failing: ${id}: ${audit.title}${value}`);
    }
  }
  return ok;
}

if (import.meta.main) {
  const root = Deno.args.find((arg) => arg.startsWith("--root="))?.slice(7);
  const server = await startServer(["--quiet"], {}, { root });
  let ok = true;
  try {
    await seed(server.url);
    const url = `${server.url}chat`;
    for (const desktop of [false, true]) {
      const report = await lighthouse(url, desktop);
      ok = show(desktop ? "desktop" : "mobile", report) && ok;
    }
  } finally {
    await server.stop();
  }
  if (!ok) Deno.exit(1);
}
