/**
 * The page remembers its user (contract, "The web page"): a tab closed and
 * opened again is the same user; after the program restarted and forgot
 * everyone, the page joins again as the same name by itself and the draft
 * is still there. Presence shows in the conversation in the terminal
 * chat's words, and a hidden tab counts new messages in its title.
 */

import assert from "node:assert/strict";
import { MessagingClient } from "../../src/client/client.ts";
import { browserTest, launchBrowser, type Page } from "../_support/browser.ts";
import { freePort, startServer } from "../_support/program.ts";

async function join(page: Page, name: string) {
  await page.getByRole("textbox", { name: "Name" }).fill(name);
  await page.getByRole("button", { name: "Join" }).click();
  await page.getByRole("textbox", { name: "Message" }).waitFor();
}

async function say(page: Page, text: string) {
  await page.getByRole("textbox", { name: "Message" }).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
  await page.getByRole("log").getByText(text, { exact: true }).waitFor();
}

browserTest(
  "a tab closed and opened again is still the same user; Leave forgets it",
  async () => {
    const server = await startServer(["--quiet"]);
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext();
      const first = await context.newPage();
      await first.goto(`${server.url}chat`);
      await join(first, "Dora");
      await first.close();
      const again = await context.newPage();
      again.setDefaultTimeout(5000);
      await again.goto(`${server.url}chat`);
      await again.getByText("Signed in as Dora").waitFor();
      await say(again, "Same Dora.");
      await again.getByRole("button", { name: "Leave" }).click();
      await again.getByRole("textbox", { name: "Name" }).waitFor();
      await again.close();
      const third = await context.newPage();
      await third.goto(`${server.url}chat`);
      await third.getByText("Live").waitFor();
      assert.equal(await third.getByText("Signed in as").isVisible(), false);
      assert.equal(
        await third.getByRole("textbox", { name: "Name" }).isVisible(),
        true,
      );
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0);
    }
  },
);

browserTest(
  "after the program restarts, the page joins again as the same name and keeps the draft",
  async () => {
    const args = ["--quiet", `--port=${freePort()}`];
    let server = await startServer(args);
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext()).newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${server.url}chat`);
      await join(page, "Eve");
      await say(page, "Before the restart.");
      assert.equal(await server.stop(), 0);
      await page.getByText("Reconnecting…").waitFor();
      const draft = page.getByRole("textbox", { name: "Message" });
      await draft.fill("half-written");
      server = await startServer(args);
      await page.getByText("joined again as Eve").waitFor();
      await page.getByText("Live").waitFor();
      assert.equal(await draft.inputValue(), "half-written");
      assert.equal(await page.locator("#me").textContent(), "Eve");
      const res = await fetch(`${server.url}users/online`, {
        headers: {
          "x-messaging-token": await page.evaluate(() =>
            localStorage.getItem("lms-token")!
          ),
        },
      });
      assert.deepEqual((await res.json()).online, ["Eve"]);
      await say(page, "half-written");
    } finally {
      await browser.close();
      await server.stop();
    }
  },
);

browserTest(
  "after a restart, a page signed out and one whose name was taken meanwhile start over: no message from before, none twice, in order",
  async () => {
    const args = ["--quiet", "--service=messaging", `--port=${freePort()}`];
    let server = await startServer(args);
    const browser = await launchBrowser();
    try {
      const before = new MessagingClient(server.url);
      await before.register("Old");
      for (let i = 1; i <= 30; i++) await before.post(`old ${i}`);
      const open = async () => {
        const page = await (await browser.newContext({
          viewport: { width: 800, height: 500 },
        })).newPage();
        page.setDefaultTimeout(10_000);
        await page.goto(`${server.url}chat`);
        await page.getByRole("log").getByText("old 30").waitFor();
        return page;
      };
      const reader = await open();
      const lee = await open();
      await join(lee, "Lee");
      // Lee's page cannot come back until someone else has taken the name.
      await lee.context().setOffline(true);
      assert.equal(await server.stop(), 0);
      server = await startServer(args);
      await new MessagingClient(server.url).register("Lee");
      const after = new MessagingClient(server.url);
      await after.register("New");
      for (let i = 1; i <= 8; i++) await after.post(`new ${i}`);
      await lee.context().setOffline(false);
      await lee.getByRole("alert").filter({ hasText: "This user exists!" })
        .waitFor();
      for (const page of [reader, lee]) {
        const log = page.getByRole("log");
        await log.getByText("the conversation starts over").waitFor();
        await log.getByText("new 8", { exact: true }).waitFor();
        // Scrolling up loads the older messages of the new numbering.
        await log.getByRole("list").hover();
        await page.mouse.wheel(0, -1000);
        await log.getByText("new 1", { exact: true }).waitFor();
        assert.deepEqual(
          await page.locator("#messages .message .text").allTextContents(),
          Array.from({ length: 8 }, (_, i) => `new ${i + 1}`),
        );
      }
    } finally {
      await browser.close();
      await server.stop();
    }
  },
);

browserTest(
  "others coming, going offline and leaving show in the conversation; a hidden tab counts new messages",
  async () => {
    const server = await startServer(["--quiet"]);
    const browser = await launchBrowser();
    try {
      const ann = await (await browser.newContext()).newPage();
      ann.setDefaultTimeout(5000);
      await ann.goto(`${server.url}chat`);
      await join(ann, "Ann");
      const bobContext = await browser.newContext();
      const bob = await bobContext.newPage();
      await bob.goto(`${server.url}chat`);
      await join(bob, "Bob");
      const log = ann.getByRole("log");
      await log.getByText("Bob is online.", { exact: true }).waitFor();
      await ann.getByRole("link", { name: "2 online" }).waitFor();

      // Ann's tab hidden: Bob's messages count in its title until it shows.
      // As a browser tells a page its tab went to the background (this file
      // is checked without the DOM's types, so the page's code is text).
      const setHidden = (hidden: boolean) =>
        ann.evaluate(`Object.defineProperty(document, "hidden", {
        configurable: true, get: () => ${hidden} });
        document.dispatchEvent(new Event("visibilitychange"));`);
      await setHidden(true);
      await say(bob, "One.");
      await say(bob, "Two.");
      await ann.waitForFunction(`document.title === "(2) Light messaging"`);
      await setHidden(false);
      await ann.waitForFunction(`document.title === "Light messaging"`);

      await bob.getByRole("button", { name: "Leave" }).click();
      await log.getByText("Bob left.", { exact: true }).waitFor();
      await join(bob, "Bob");
      await log.getByText("Bob is online.", { exact: true }).nth(1).waitFor();
      // Leaving may have said "went offline" already, as the stream ended
      // before the name went: the closed tab says it once more.
      const offline = log.getByText("Bob went offline.", { exact: true });
      const before = await offline.count();
      await bobContext.close();
      await offline.nth(before).waitFor();
      // Nobody's markup: the notice is text.
      assert.equal(await log.locator(".notice b, .notice img").count(), 0);
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0);
    }
  },
);

browserTest(
  "after a restart, five tabs of one browser that all send at once join again once, as the same name, each saying so, and show each message once",
  async () => {
    const args = ["--quiet", `--port=${freePort()}`];
    let server = await startServer(args);
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext();
      const tabs: Page[] = [];
      for (let i = 0; i < 5; i++) {
        const page = await context.newPage();
        page.setDefaultTimeout(10_000);
        await page.goto(`${server.url}chat`);
        tabs.push(page);
      }
      // Joined in a tab that does not hold the streams.
      await join(tabs[2]!, "Nia");
      await say(tabs[2]!, "Before the restart.");
      for (const tab of tabs) await tab.getByText("Signed in as Nia").waitFor();
      assert.equal(await server.stop(), 0);
      await tabs[0]!.getByText("Reconnecting…").waitFor();
      server = await startServer(args);
      // Every tab finds out at once: each sends its draft.
      await Promise.all(tabs.map(async (tab, i) => {
        const box = tab.getByRole("textbox", { name: "Message" });
        await box.fill(`draft ${i}`);
        await box.press("Enter");
      }));
      for (const tab of tabs) {
        for (let i = 0; i < 5; i++) {
          await tab.getByRole("log").getByText(`draft ${i}`, { exact: true })
            .waitFor();
        }
        await tab.getByText("joined again as Nia").waitFor();
        assert.equal(await tab.locator("#me").textContent(), "Nia");
      }
      // Shown once each, and the old life's message is gone with it.
      for (const tab of tabs) {
        const texts = await tab.locator("#messages .message .text")
          .allTextContents();
        assert.deepEqual(
          texts.toSorted(),
          ["draft 0", "draft 1", "draft 2", "draft 3", "draft 4"],
        );
      }
      const res = await fetch(`${server.url}users/online`, {
        headers: {
          "x-messaging-token": await tabs[4]!.evaluate(() =>
            localStorage.getItem("lms-token")!
          ),
        },
      });
      assert.deepEqual((await res.json()).online, ["Nia"]);
    } finally {
      await browser.close();
      await server.stop();
    }
  },
);
