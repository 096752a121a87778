/**
 * The chat page against axe-core (WCAG 2.1 A and AA) in real Chromium, in
 * every state a user meets: signed out, signed in with messages, a refusal
 * shown, reconnecting, at 320 and 1280 px, light and dark; and no sideways
 * scrolling at any width from 320 to 1920 px.
 */

import assert from "node:assert/strict";
import axe from "axe-core";
import {
  type Browser,
  browserTest,
  launchBrowser,
  type Page,
} from "../_support/browser.ts";
import { type RunningServer, startServer } from "../_support/program.ts";

/** What the tests read of the page's globals (this file has no DOM types). */
interface AxeWindow {
  document: { documentElement: { scrollWidth: number } };
  axe: {
    run(
      context: unknown,
      options: unknown,
    ): Promise<
      { violations: { id: string; impact: string; nodes: unknown[] }[] }
    >;
  };
}

/** The part of a DOM Range the tests use. */
interface RangeLike {
  setStart(node: unknown, offset: number): void;
  setEnd(node: unknown, offset: number): void;
  getBoundingClientRect(): { left: number };
}

/** The violations axe finds on the page as it is now, as `id (impact) ×n`. */
async function violations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not
  // govern: the page itself still runs nothing but its own script.
  await page.evaluate(axe.source);
  const found = await page.evaluate(() =>
    (globalThis as unknown as AxeWindow).axe.run(
      (globalThis as unknown as AxeWindow).document,
      {
        runOnly: {
          type: "tag",
          values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"],
        },
      },
    )
  );
  return found.violations.map((v) =>
    `${v.id} (${v.impact}) ×${v.nodes.length}`
  );
}

async function open(
  browser: Browser,
  server: RunningServer,
  width: number,
  colorScheme: "light" | "dark",
): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width, height: 800 },
    colorScheme,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(5000);
  await page.goto(`${server.url}chat`);
  await page.getByText("Live").waitFor();
  return page;
}

async function join(page: Page, name: string) {
  await page.getByRole("textbox", { name: "Name" }).fill(name);
  await page.getByRole("button", { name: "Join" }).click();
  await page.getByRole("textbox", { name: "Message" }).waitFor();
}

async function say(page: Page, text: string, red = false) {
  if (red) await page.getByRole("radio", { name: "Red" }).check();
  await page.getByRole("textbox", { name: "Message" }).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
  await page.getByRole("log").getByText(text, { exact: true }).waitFor();
}

browserTest(
  "axe finds nothing in any state, narrow or wide, light or dark",
  async () => {
    const server = await startServer(["--quiet"]);
    const browser = await launchBrowser();
    const found: Record<string, string[]> = {};
    try {
      for (const width of [320, 1280]) {
        for (const scheme of ["light", "dark"] as const) {
          const at = `${width} ${scheme}`;
          const page = await open(browser, server, width, scheme);
          found[`${at} signed out`] = await violations(page);
          await page.getByRole("textbox", { name: "Name" }).fill("a-b");
          await page.getByRole("button", { name: "Join" }).click();
          await page.locator("#join-error .line").waitFor();
          found[`${at} join refused`] = await violations(page);
          await join(page, `Ann${width}${scheme}`);
          for (let i = 0; i < 12; i++) {
            await say(page, `${at} line ${i}.`, i % 3 === 0);
          }
          found[`${at} signed in with messages`] = await violations(page);
          await page.getByRole("textbox", { name: "Quote" }).fill("lowercase");
          await page.getByRole("button", { name: "Set quote" }).click();
          await page.locator("#quote-error .line").first().waitFor();
          found[`${at} quote refused`] = await violations(page);
          await page.context().close();
        }
      }
      // Reconnecting: the program is gone, the page says so.
      const page = await open(browser, server, 360, "light");
      await join(page, "Bob");
      await say(page, "Before the stop.");
      assert.equal(await server.stop(), 0);
      await page.getByText("Reconnecting…").waitFor();
      found["360 light reconnecting"] = await violations(page);
    } finally {
      await browser.close();
      await server.stop().catch(() => {});
    }
    const failing = Object.entries(found).filter(([, list]) => list.length);
    assert.deepEqual(failing, [], JSON.stringify(failing, null, 1));
    assert.equal(Object.keys(found).length, 17);
  },
);

browserTest(
  "no width from 320 to 1920 px scrolls sideways, signed in or out, with the longest name and word",
  async () => {
    const server = await startServer(["--quiet"]);
    const browser = await launchBrowser();
    const wide: string[] = [];
    try {
      for (const scheme of ["light", "dark"] as const) {
        const page = await open(browser, server, 320, scheme);
        const measure = async (state: string) => {
          for (let width = 320; width <= 1920; width += 40) {
            await page.setViewportSize({ width, height: 800 });
            const scroll = await page.evaluate(() =>
              (globalThis as unknown as AxeWindow).document.documentElement
                .scrollWidth
            );
            if (scroll > width) {
              wide.push(`${scheme} ${state} ${width}: ${scroll}`);
            }
          }
        };
        await measure("signed out");
        // The longest name, with no space to break at: it shows in the bar
        // and in the online list.
        await join(page, scheme + "N".repeat(64 - scheme.length));
        await say(page, scheme + "W".repeat(300));
        await measure("signed in");
        await page.context().close();
      }
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0);
    }
    assert.deepEqual(wide, []);
  },
);

browserTest(
  "the browser's default font size is the page's: at 24 px text is 24 px, and at 320 × 568 nothing scrolls sideways or leaves the screen",
  async () => {
    const server = await startServer(["--quiet"]);
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({
        viewport: { width: 320, height: 568 },
      });
      const page = await context.newPage();
      page.setDefaultTimeout(5000);
      // As the browser's settings set it (Appearance, Font size).
      const cdp = await context.newCDPSession(page);
      await cdp.send("Page.setFontSizes", { fontSizes: { standard: 24 } });
      await page.goto(`${server.url}chat`);
      await page.getByText("Live").waitFor();
      const name = page.getByRole("textbox", { name: "Name" });
      const size = (locator: typeof name) =>
        locator.evaluate((el) =>
          (globalThis as unknown as {
            getComputedStyle(e: unknown): { fontSize: string };
          }).getComputedStyle(el).fontSize
        );
      assert.equal(await size(name), "24px");
      const fits = async (state: string) => {
        const scroll = await page.evaluate(() =>
          (globalThis as unknown as AxeWindow).document.documentElement
            .scrollWidth
        );
        assert.ok(scroll <= 320, `${state}: ${scroll} px wide`);
        for (const button of await page.getByRole("button").all()) {
          if (!(await button.isVisible())) continue;
          const box = (await button.boundingBox())!;
          assert.ok(box.x >= 0 && box.x + box.width <= 320, `${state}`);
        }
      };
      await fits("signed out");
      await join(page, "Ann");
      await say(page, "A sentence long enough to wrap on a phone this narrow.");
      assert.equal(await size(page.locator(".message .text")), "24px");
      await fits("signed in");
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0);
    }
  },
);

browserTest(
  "a red message is told apart without colour: a mark before its words, and read out as red",
  async () => {
    const server = await startServer(["--quiet"]);
    const browser = await launchBrowser();
    try {
      const page = await open(browser, server, 1280, "light");
      await join(page, "Ann");
      await say(page, "same words", true);
      await page.getByRole("radio", { name: "Black" }).check();
      await page.getByRole("textbox", { name: "Message" }).fill("same words");
      await page.getByRole("button", { name: "Send" }).click();
      const entries = page.locator("#messages .message");
      await entries.nth(1).waitFor();
      // Where the words start: the red one's are pushed right by a mark
      // drawn before them, which needs no colour to be seen.
      const wordsAt = (n: number) =>
        entries.nth(n).locator(".text").evaluate((el) => {
          const range = (globalThis as unknown as {
            document: { createRange(): RangeLike };
          }).document.createRange();
          range.setStart((el as { firstChild: unknown }).firstChild, 0);
          range.setEnd((el as { firstChild: unknown }).firstChild, 1);
          return range.getBoundingClientRect().left;
        });
      const shift = await wordsAt(0) - await wordsAt(1);
      assert.ok(shift >= 8, `the red words start ${shift} px further right`);
      // What a screen reader is given: the accessibility tree's text.
      const cdp = await page.context().newCDPSession(page);
      const { nodes } = await cdp.send("Accessibility.getFullAXTree");
      const spoken = nodes.map((node) => String(node.name?.value ?? ""));
      assert.ok(spoken.some((name) => /^Red: ?$/.test(name)), "said red");
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0);
    }
  },
);

browserTest(
  "stacked combining marks stay in their own message: the messages above and below look as they would without them",
  async () => {
    const server = await startServer(["--quiet"]);
    const browser = await launchBrowser();
    try {
      const page = await open(browser, server, 800, "light");
      await join(page, "Zed");
      // Marks that fonts stack above and below the letter, line after line.
      const marks = [
        "\u0336\u0337\u0338\u0321\u0322\u0327\u0328\u031b\u0316\u0317\u0318",
        "\u0319\u031c\u031d\u031e\u031f\u0320\u0324\u0325\u0326\u0329\u032a",
        "\u032b\u032c\u032d\u032e\u032f\u0330\u0331\u0332\u0333\u0339\u033a",
        "\u033b\u033c\u0345\u0347\u0348\u0349\u034d\u034e\u0353\u0354\u0355",
        "\u0356\u0359\u035a",
      ].join("").repeat(6);
      await say(page, "Above.");
      await say(page, `Z${marks}algo`);
      await say(page, "Below.");
      const entries = page.locator("#messages .message");
      const looks = async () => [
        await entries.nth(0).screenshot(),
        await entries.nth(2).screenshot(),
      ];
      const withMarks = await looks();
      // Not painted, laid out the same: what the neighbours show of it.
      await entries.nth(1).locator(".text").evaluate((el) =>
        (el as { style: { visibility: string } }).style.visibility = "hidden"
      );
      const without = await looks();
      assert.ok(withMarks[0]!.equals(without[0]!), "drawn over the one above");
      assert.ok(withMarks[1]!.equals(without[1]!), "drawn over the one below");
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0);
    }
  },
);

/** WCAG's contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(one: string, other: string): number {
  const luminance = (rgb: string) => {
    const [r = 0, g = 0, b = 0] = (rgb.match(/[\d.]+/g) ?? []).map((c) => {
      const s = Number(c) / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [luminance(one), luminance(other)].sort((a, b) => b - a);
  return (hi! + 0.05) / (lo! + 0.05);
}

browserTest(
  "every text field's border stands out 3:1 from the panel and the field, light and dark",
  async () => {
    const server = await startServer(["--quiet"]);
    const browser = await launchBrowser();
    const weak: string[] = [];
    try {
      for (const scheme of ["light", "dark"] as const) {
        const page = await open(browser, server, 1280, scheme);
        for (const field of await page.locator("input:not([type])").all()) {
          const colours = await field.evaluate((el) => {
            const style = (globalThis as unknown as {
              getComputedStyle(e: unknown): {
                borderTopColor: string;
                backgroundColor: string;
              };
            }).getComputedStyle;
            const panel = (el as { closest(s: string): unknown }).closest(
              ".panel",
            );
            return {
              id: (el as { id: string }).id,
              border: style(el).borderTopColor,
              field: style(el).backgroundColor,
              panel: style(panel).backgroundColor,
            };
          });
          for (const against of ["field", "panel"] as const) {
            const ratio = contrast(colours.border, colours[against]);
            if (ratio < 3) {
              weak.push(`${scheme} #${colours.id} vs ${against}: ${ratio}`);
            }
          }
        }
        await page.context().close();
      }
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0);
    }
    assert.deepEqual(weak, []);
  },
);
