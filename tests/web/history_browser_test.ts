/**
 * The chat page's history in real Chromium, against the real program:
 * scrolling up to the top of the conversation loads the older messages,
 * page by page, and what the reader was looking at stays in place.
 */

import assert from "node:assert/strict";
import { MessagingClient } from "../../src/client/client.ts";
import { browserTest, launchBrowser, watchPage } from "../_support/browser.ts";
import { startServer } from "../_support/program.ts";

/** What the test reads of the conversation, in the page. */
interface ListElement {
  scrollTop: number;
  scrollHeight: number;
  clientHeight: number;
  querySelectorAll(selector: string): ArrayLike<{ textContent: string }>;
  querySelector(selector: string): {
    getBoundingClientRect(): { top: number };
    textContent: string;
  };
}

browserTest(
  "the page loads older messages as the reader scrolls up, in order, each once, the message in view staying in place",
  async () => {
    const server = await startServer(["--quiet", "--service=messaging"]);
    const browser = await launchBrowser();
    try {
      const bob = new MessagingClient(server.url);
      await bob.register("bob");
      for (let i = 1; i <= 60; i++) await bob.post(`m${i}`);

      const context = await browser.newContext({
        viewport: { width: 800, height: 500 },
      });
      const page = await context.newPage();
      page.setDefaultTimeout(5000);
      const watch = watchPage(page, [new URL(server.url).origin]);
      // Each history request waits for the gate, so the test can see where
      // the message in view was before the page moved anything.
      let gate = Promise.withResolvers<void>();
      let asked = Promise.withResolvers<void>();
      let requests = 0;
      await page.route("**/messages?*", async (route) => {
        requests++;
        asked.resolve();
        await gate.promise;
        await route.continue();
      });
      await page.goto(`${server.url}chat`);
      // The list that scrolls, inside the conversation's log.
      const log = page.getByRole("log").getByRole("list");
      await log.locator(".message").filter({ hasText: "m60" }).waitFor();

      const texts = () =>
        log.evaluate((el: ListElement) =>
          Array.from(
            el.querySelectorAll(".message .text"),
            (e) => e.textContent,
          )
        );
      assert.deepEqual(await texts(), ["m56", "m57", "m58", "m59", "m60"]);

      let placesChecked = 0;
      for (let round = 0; round < 10 && (await texts()).length < 60; round++) {
        const shownBefore = (await texts()).length;
        await log.hover();
        await page.mouse.wheel(0, -10_000);
        await asked.promise;
        // The oldest entry shown is the one in view at the top.
        const before = await log.evaluate((el: ListElement) => ({
          text: el.querySelector(".message").textContent,
          top: el.querySelector(".message").getBoundingClientRect().top,
          scrolls: el.scrollHeight > el.clientHeight,
        }));
        asked = Promise.withResolvers();
        gate.resolve();
        // More entries than before: the page came.
        await log.locator(".message").nth(shownBefore).waitFor();
        gate = Promise.withResolvers();
        // The page has settled once no request is pending for a moment.
        await page.waitForTimeout(200);
        const after = await log.evaluate(
          (el: ListElement, text: string) => {
            const entry = Array.from(
              el.querySelectorAll(".message"),
            ).find((e) => e.textContent?.endsWith(text)) as unknown as {
              getBoundingClientRect(): { top: number };
            };
            return { top: entry.getBoundingClientRect().top, at: el.scrollTop };
          },
          before.text,
        );
        if (before.scrolls) {
          assert.ok(
            Math.abs(after.top - before.top) <= 1,
            `${before.text} moved from ${before.top} to ${after.top}`,
          );
          assert.ok(after.at > 0, "the view did not jump to the top");
          placesChecked++;
        }
      }
      gate.resolve();
      assert.deepEqual(
        await texts(),
        Array.from({ length: 60 }, (_, i) => `m${i + 1}`),
      );
      assert.ok(placesChecked >= 1, "a scrolling list was checked");
      // 55 older messages, 20 a page: 3 pages, and no more once next is null.
      await log.hover();
      await page.mouse.wheel(0, -10_000);
      await page.waitForTimeout(300);
      assert.equal(requests, 3);
      assert.deepEqual(watch.errors, []);
      assert.deepEqual(watch.foreignRequests, []);
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0);
    }
  },
);

browserTest(
  "on a touch phone or tablet whose list the newest five do not fill, swiping down reaches the oldest message",
  async () => {
    const server = await startServer(["--quiet", "--service=messaging"]);
    const browser = await launchBrowser();
    try {
      const bob = new MessagingClient(server.url);
      await bob.register("bob");
      for (let i = 1; i <= 30; i++) await bob.post(`m${i}`);
      for (const [width, height] of [[360, 640], [768, 1024]] as const) {
        const context = await browser.newContext({
          viewport: { width, height },
          isMobile: true,
          hasTouch: true,
        });
        const page = await context.newPage();
        page.setDefaultTimeout(5000);
        await page.goto(`${server.url}chat`);
        const log = page.getByRole("log").getByRole("list");
        await log.locator(".message").filter({ hasText: "m30" }).waitFor();
        const box = (await log.boundingBox())!;
        const [x, y] = [Math.round(box.x + box.width / 2), Math.round(box.y)];
        // A finger drags the conversation down, as a reader going back does.
        const cdp = await context.newCDPSession(page);
        const touch = (
          type: "touchStart" | "touchMove" | "touchEnd",
          points: { x: number; y: number }[],
        ) =>
          cdp.send("Input.dispatchTouchEvent", { type, touchPoints: points });
        const first = log.locator(".message").filter({ hasText: /^bobm1$/ });
        for (let swipe = 0; swipe < 30 && !(await first.count()); swipe++) {
          await touch("touchStart", [{ x, y: y + 20 }]);
          for (let step = 1; step <= 10; step++) {
            await touch("touchMove", [{ x, y: y + 20 + step * 30 }]);
          }
          await touch("touchEnd", []);
          await page.waitForTimeout(100);
        }
        assert.deepEqual(
          await log.locator(".message .text").allTextContents(),
          Array.from({ length: 30 }, (_, i) => `m${i + 1}`),
          `${width}x${height}`,
        );
        await context.close();
      }
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0);
    }
  },
);
