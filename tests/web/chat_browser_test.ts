/**
 * The chat page in real Chromium, against the real program: two people
 * chatting in two browser contexts, as users would.
 */

import assert from "node:assert/strict";
import {
  type Browser,
  browserTest,
  launchBrowser,
  type Page,
  type PageWatch,
  watchPage,
} from "../_support/browser.ts";
import { type RunningServer, startServer } from "../_support/program.ts";
import { utf8Header } from "../_support/call.ts";

/** How long a live message may take to show in another tab. */
const LIVE_MS = 1000;

interface BrowserGlobals {
  getComputedStyle(
    element: unknown,
    pseudo?: string,
  ): { color: string; backgroundColor: string };
}

interface Tab {
  page: Page;
  watch: PageWatch;
}

async function openChat(
  browser: Browser,
  server: RunningServer,
  colorScheme: "light" | "dark" = "light",
  withoutWebSocket = false,
): Promise<Tab> {
  const context = await browser.newContext({ colorScheme });
  if (withoutWebSocket) {
    // As in a browser without WebSocket: the page must do without.
    await context.addInitScript(() =>
      delete (globalThis as { WebSocket?: unknown }).WebSocket
    );
  }
  const page = await context.newPage();
  page.setDefaultTimeout(5000);
  const watch = watchPage(page, [new URL(server.url).origin]);
  await page.goto(`${server.url}chat`);
  await page.getByText("Live").waitFor();
  return { page, watch };
}

async function join(tab: Tab, name: string): Promise<void> {
  await tab.page.getByRole("textbox", { name: "Name" }).fill(name);
  await tab.page.getByRole("button", { name: "Join" }).click();
  await tab.page.getByRole("textbox", { name: "Message" }).waitFor();
}

async function send(tab: Tab, text: string, color?: "Red" | "Black") {
  if (color) await tab.page.getByRole("radio", { name: color }).check();
  const box = tab.page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  const answered = tab.page.waitForResponse((res) =>
    new URL(res.url()).pathname === "/" && res.request().method() === "POST"
  );
  // Enter sends: the form is a real form.
  await box.press("Enter");
  assert.equal((await answered).status(), 200);
}

/** The message in the log whose text is exactly `text`. */
const messageIn = (tab: Tab, text: string) =>
  tab.page.getByRole("log").locator(".message").filter({
    has: tab.page.getByText(text, { exact: true }),
  });

/**
 * Unregisters the tab's user with its stored token while the tab is away
 * (an open page would hear it live); the browser keeps the token.
 */
async function leaveAway(tab: Tab, server: RunningServer): Promise<void> {
  const token = await tab.page.evaluate(() =>
    localStorage.getItem("lms-token")
  );
  await tab.page.goto("about:blank");
  const res = await fetch(`${server.url}users`, {
    method: "DELETE",
    headers: { "x-messaging-token": token! },
  });
  await res.body?.cancel();
}

/** A test with the program started with `args` and Chromium launched. */
function chatTest(
  name: string,
  args: string[],
  fn: (browser: Browser, server: RunningServer) => Promise<void>,
): void {
  browserTest(name, async () => {
    const server = await startServer(["--quiet", ...args]);
    const browser = await launchBrowser();
    try {
      await fn(browser, server);
    } finally {
      await browser.close();
      assert.equal(await server.stop(), 0);
    }
  });
}

chatTest(
  "two tabs chat live: messages, markup as text, red, refusals, the quote, reload, leave",
  [],
  async (browser, server) => {
    const ann = await openChat(browser, server);
    const bob = await openChat(browser, server, "dark");

    await join(ann, "Ann");
    assert.equal(
      await ann.page.evaluate("document.activeElement?.id"),
      "message",
      "after joining, the message box has the focus",
    );
    // A name taken is refused in the service's words, and nothing changes.
    await bob.page.getByRole("textbox", { name: "Name" }).fill("Ann");
    await bob.page.getByRole("button", { name: "Join" }).click();
    await bob.page.getByRole("alert").filter({ hasText: "This user exists!" })
      .waitFor();
    await bob.page.getByRole("textbox", { name: "Name" }).fill("a-b");
    await bob.page.getByRole("button", { name: "Join" }).click();
    await bob.page.getByRole("alert").filter({
      hasText: "must not contain '-'",
    })
      .waitFor();
    await join(bob, "Bob");

    await send(ann, "Hello Bob");
    const started = performance.now();
    await messageIn(bob, "Hello Bob").waitFor({ timeout: LIVE_MS });
    const seenMs = performance.now() - started;
    assert.ok(seenMs < LIVE_MS, `shown in the other tab after ${seenMs} ms`);
    assert.equal(
      await messageIn(bob, "Hello Bob").locator(".author").textContent(),
      "Ann",
      "the author is beside the message",
    );

    // Markup someone wrote is text: no element is made from it, nothing runs.
    const markup = "<img src=x onerror=alert(1)><b>bold</b>";
    let dialogs = 0;
    bob.page.on("dialog", (dialog) => {
      dialogs++;
      dialog.dismiss();
    });
    await send(ann, markup);
    await messageIn(bob, markup).waitFor({ timeout: LIVE_MS });
    const log = bob.page.getByRole("log");
    assert.equal(await log.locator("img, b").count(), 0);
    assert.equal(dialogs, 0);

    // Red is red, black is not.
    await send(bob, "Alarm", "Red");
    await messageIn(ann, "Alarm").waitFor({ timeout: LIVE_MS });
    const colorOf = (tab: Tab, text: string) =>
      messageIn(tab, text).locator(".text").evaluate((el) =>
        // Runs in the page; this file is checked without the DOM's types.
        (globalThis as unknown as BrowserGlobals).getComputedStyle(el).color
          .match(/\d+/g)!.map(Number)
      );
    for (const tab of [ann, bob]) {
      await messageIn(tab, "Alarm").waitFor({ timeout: LIVE_MS });
      const [r = 0, g = 0, b = 0] = await colorOf(tab, "Alarm");
      assert.ok(r > 150 && g < 120 && b < 120, `red shows red: ${[r, g, b]}`);
      const [r2 = 0, g2 = 0] = await colorOf(tab, "Hello Bob");
      assert.ok(!(r2 > 150 && g2 < 120), `black is not red: ${[r2, g2]}`);
    }

    // The user list knows both.
    await ann.page.getByRole("button", { name: "Refresh" }).click();
    await ann.page.locator("#users li", { hasText: "Bob" }).waitFor();
    assert.deepEqual(await ann.page.locator("#users li").allTextContents(), [
      "Ann",
      "Bob",
    ]);

    // The quote: a refusal in the service's words, then a replacement that
    // reaches the other tab live.
    const quoteBox = ann.page.getByRole("textbox", { name: "Quote" });
    await quoteBox.fill("lowercase");
    await ann.page.getByRole("button", { name: "Set quote" }).click();
    await ann.page.getByRole("alert").filter({
      hasText: "Does not start with a majuscule",
    }).waitFor();
    await quoteBox.fill("Be kind.");
    await ann.page.getByRole("button", { name: "Set quote" }).click();
    await bob.page.locator("#quote", { hasText: "Be kind." }).waitFor({
      timeout: LIVE_MS,
    });

    // A reload keeps the user: same name, still able to post.
    await bob.page.reload();
    await bob.page.getByText("Signed in as Bob").waitFor();
    await send(bob, "Back again");
    await messageIn(ann, "Back again").waitFor({ timeout: LIVE_MS });

    // Leave unregisters: the old token is refused, the join form is back.
    const token = await ann.page.evaluate(() =>
      localStorage.getItem("lms-token")
    );
    assert.match(token ?? "", /^Ann-[0-9a-f]{40}$/);
    await ann.page.getByRole("button", { name: "Leave" }).click();
    await ann.page.getByRole("textbox", { name: "Name" }).waitFor();
    assert.equal(
      await ann.page.evaluate(() => localStorage.getItem("lms-token")),
      null,
    );
    const res = await fetch(`${server.url}users`, {
      headers: { "x-messaging-token": token! },
    });
    await res.body?.cancel();
    assert.equal(res.status, 401);

    for (const tab of [ann, bob]) {
      assert.deepEqual(tab.watch.foreignRequests, []);
      assert.deepEqual(tab.watch.errors, []);
    }
  },
);

chatTest(
  "who is online: two tabs see each other live, a closed tab goes offline, one that leaves or is unregistered is gone",
  [],
  async (browser, server) => {
    const ann = await openChat(browser, server);
    const bob = await openChat(browser, server, "dark");
    const onlineIn = (tab: Tab) =>
      tab.page.locator("#users li").allTextContents();
    const shows = (tab: Tab, names: string[]) =>
      tab.page.waitForFunction(
        (expected) =>
          // Runs in the page; this file is checked without the DOM's types.
          JSON.stringify(
            [
              ...(globalThis as unknown as {
                document: {
                  querySelectorAll(s: string): { textContent: string }[];
                };
              }).document.querySelectorAll("#users li"),
            ].map((li) => li.textContent),
          ) === expected,
        JSON.stringify(names),
      );
    await join(ann, "Ann");
    await join(bob, "Bob");
    // Without a click: each sees the other come online.
    await shows(ann, ["Ann", "Bob"]);
    await shows(bob, ["Ann", "Bob"]);
    assert.equal(
      await ann.page.getByRole("heading", { name: "Online" }).count(),
      1,
    );

    // A tab closed without leaving: its user goes offline for the others.
    const cleo = await openChat(browser, server);
    await join(cleo, "Cleo");
    await shows(ann, ["Ann", "Bob", "Cleo"]);
    await cleo.page.context().close();
    await shows(ann, ["Ann", "Bob"]);
    await shows(bob, ["Ann", "Bob"]);

    // Leaving: gone from the other's panel at once.
    await bob.page.getByRole("button", { name: "Leave" }).click();
    await bob.page.getByRole("textbox", { name: "Name" }).waitFor();
    await shows(ann, ["Ann"]);
    assert.equal(await bob.page.locator("#join-error").textContent(), "");

    // A reload: the list is asked again, and Ann is still online.
    await ann.page.reload();
    await shows(ann, ["Ann"]);
    await join(bob, "Bob");
    await shows(ann, ["Ann", "Bob"]);

    // Unregistered from elsewhere with its token: the page says so.
    const token = await ann.page.evaluate(() =>
      localStorage.getItem("lms-token")
    );
    const res = await fetch(`${server.url}users`, {
      method: "DELETE",
      headers: { "x-messaging-token": utf8Header(token!) },
    });
    await res.body?.cancel();
    await ann.page.getByRole("alert").filter({ hasText: "unregistered" })
      .waitFor();
    await ann.page.getByRole("textbox", { name: "Name" }).waitFor();
    await shows(bob, ["Bob"]);
    assert.deepEqual(await onlineIn(bob), ["Bob"]);
    // Still following as nobody: messages keep coming.
    await send(bob, "Anyone?");
    await messageIn(ann, "Anyone?").waitFor({ timeout: LIVE_MS });

    for (const tab of [ann, bob]) {
      assert.deepEqual(tab.watch.foreignRequests, []);
      assert.deepEqual(tab.watch.errors, []);
    }
  },
);

chatTest(
  "a page opened again after its user was forgotten joins again as that name, or asks for one when it was taken",
  [],
  async (browser, server) => {
    const tab = await openChat(browser, server);
    const forget = () => leaveAway(tab, server);
    await join(tab, "Cleo");
    await forget();
    await tab.page.goto(`${server.url}chat`);
    await tab.page.getByText("joined again as Cleo").waitFor();
    await tab.page.getByText("Signed in as Cleo").waitFor();
    await send(tab, "Still Cleo");

    // The name was taken meanwhile: the page asks for another, saying why.
    await forget();
    const other = await fetch(`${server.url}users`, {
      method: "POST",
      body: "Cleo",
    });
    await other.body?.cancel();
    await tab.page.goto(`${server.url}chat`);
    await tab.page.getByRole("alert").filter({ hasText: "join again" })
      .waitFor();
    await tab.page.getByRole("alert").filter({ hasText: "This user exists!" })
      .waitFor();
    await join(tab, "Cleo2");
    assert.deepEqual(tab.watch.errors, []);
  },
);

chatTest(
  "a refusal of the old token that arrives after the page joined again leaves it signed in",
  [],
  async (browser, server) => {
    const tab = await openChat(browser, server);
    await join(tab, "Dana");
    await leaveAway(tab, server);
    // The page's first look at who is online, sent with the old token, is
    // held until the page has joined again; its 401 then comes late.
    const release = Promise.withResolvers<void>();
    let held = 0;
    await tab.page.route("**/users/online", async (route) => {
      if (held++ === 0) await release.promise;
      await route.continue();
    });
    await tab.page.goto(`${server.url}chat`);
    await tab.page.getByText("joined again as Dana").waitFor();
    release.resolve();
    await send(tab, "Still Dana");
    assert.equal(await tab.page.locator("#me").textContent(), "Dana");
    assert.equal(
      await tab.page.getByText("This user exists!").count(),
      0,
      "no second join was tried",
    );
    assert.ok(held >= 1, "the old token's request was held");
  },
);

chatTest(
  "messaging alone: the quote panel is not shown, and the page works by keyboard",
  ["--service=messaging"],
  async (browser, server) => {
    const tab = await openChat(browser, server);
    assert.equal(
      await tab.page.getByRole("textbox", { name: "Quote" }).count(),
      0,
    );
    // Keyboard only: the name box has the focus; type, Enter, type, Enter.
    await tab.page.keyboard.type("Dee");
    await tab.page.keyboard.press("Enter");
    await tab.page.getByRole("textbox", { name: "Message" }).waitFor();
    await tab.page.keyboard.type("typed, not clicked");
    await tab.page.keyboard.press("Enter");
    await messageIn(tab, "typed, not clicked").waitFor({ timeout: LIVE_MS });
    assert.deepEqual(tab.watch.errors, []);
    assert.deepEqual(tab.watch.foreignRequests, []);
  },
);

/** Names from several scripts: Latin-1, beyond it, Cyrillic, CJK, emoji. */
const NAMES = ["José", "Zoë", "Иван", "李雷", "Bob🚀", "Łukasz"];

for (const name of NAMES) {
  chatTest(
    `${name} joins, is seen live by another tab, is listed, leaves and rejoins`,
    [],
    async (browser, server) => {
      const tab = await openChat(browser, server);
      const watcher = await openChat(browser, server);
      await join(watcher, "Watcher");
      await join(tab, name);
      await tab.page.getByText(`Signed in as ${name}`).waitFor();

      const text = `Hello from ${name}`;
      await send(tab, text);
      await messageIn(watcher, text).waitFor({ timeout: LIVE_MS });
      assert.equal(
        await messageIn(watcher, text).locator(".author").textContent(),
        name,
      );

      await tab.page.getByRole("button", { name: "Refresh" }).click();
      await tab.page.locator("#users li", { hasText: name }).waitFor();
      assert.deepEqual(await tab.page.locator("#users li").allTextContents(), [
        "Watcher",
        name,
      ]);

      // Leaving unregisters, so the same name joins again.
      await tab.page.getByRole("button", { name: "Leave" }).click();
      await tab.page.getByRole("textbox", { name: "Name" }).waitFor();
      assert.equal(
        await tab.page.getByRole("alert").allTextContents().then(
          (texts) => texts.join(""),
        ),
        "",
      );
      await join(tab, name);
      await send(tab, "Back");
      await messageIn(watcher, "Back").waitFor({ timeout: LIVE_MS });
      assert.equal(await tab.page.locator("#status").textContent(), "Live");

      for (const { watch } of [tab, watcher]) {
        assert.deepEqual(watch.foreignRequests, []);
        assert.deepEqual(watch.errors, []);
      }
    },
  );
}

chatTest(
  "a quote refused twice shows the two refusals apart, one a line",
  [],
  async (browser, server) => {
    const tab = await openChat(browser, server);
    await tab.page.getByRole("textbox", { name: "Quote" }).fill("lowercase");
    await tab.page.getByRole("button", { name: "Set quote" }).click();
    const alert = tab.page.locator("#quote-error");
    await alert.filter({ hasText: "Does not end properly" }).waitFor();
    // innerText is the text as laid out: a line break between the two.
    assert.equal(
      await alert.innerText(),
      "Does not start with a majuscule\nDoes not end properly",
    );
    // A later refusal replaces both.
    await tab.page.getByRole("textbox", { name: "Quote" }).fill("Lowercase");
    await tab.page.getByRole("button", { name: "Set quote" }).click();
    // Waiting for the old text to go is not enough: the alert is empty
    // between the click and the answer.
    await alert.filter({ hasText: /^Does not end properly$/ }).waitFor();
    assert.equal(await alert.innerText(), "Does not end properly");
    assert.deepEqual(tab.watch.errors, []);
  },
);

chatTest(
  "a name is never cut: 40 rockets join as themselves, 65 letters are refused in the service's words",
  [],
  async (browser, server) => {
    const tab = await openChat(browser, server);
    const rockets = "🚀".repeat(40);
    await join(tab, rockets);
    assert.equal(await tab.page.locator("#me").textContent(), rockets);
    await tab.page.getByRole("button", { name: "Leave" }).click();
    const name = tab.page.getByRole("textbox", { name: "Name" });
    await name.fill("a".repeat(65));
    assert.equal(await name.inputValue(), "a".repeat(65));
    await tab.page.getByRole("button", { name: "Join" }).click();
    await tab.page.getByRole("alert").filter({
      hasText: "Name must be at most 64 characters",
    }).waitFor();
    assert.equal(await name.isVisible(), true, "not signed in");
  },
);

chatTest(
  "a call that cannot reach the service says so in the status too, until one does",
  [],
  async (browser, server) => {
    const tab = await openChat(browser, server);
    await join(tab, "Dana");
    const status = tab.page.locator("#status");
    // Whatever the stream brings (the user coming online) has come, and the
    // history the first message asks for: any answer says it can be reached.
    const history = tab.page.waitForResponse((res) =>
      new URL(res.url()).pathname === "/messages"
    );
    await send(tab, "first");
    await messageIn(tab, "first").waitFor();
    await history;
    assert.equal(await status.textContent(), "Live");
    // The event stream stays open; only POST / fails to reach the service.
    await tab.page.route(server.url, (route) => route.abort("failed"));
    const box = tab.page.getByRole("textbox", { name: "Message" });
    await box.fill("lost");
    await box.press("Enter");
    await tab.page.getByRole("alert").filter({ hasText: "cannot be reached" })
      .waitFor();
    assert.equal(await status.textContent(), "Cannot reach the service");
    assert.equal(await box.inputValue(), "lost", "what was typed is kept");

    await tab.page.unroute(server.url);
    await send(tab, "found");
    assert.equal(await status.textContent(), "Live");
    assert.equal(
      await tab.page.locator("#post-error").textContent(),
      "",
      "the old error is gone",
    );
  },
);

chatTest(
  'anything the service answers, a live message too, clears "Cannot reach the service"; the browser going offline and online is heard',
  [],
  async (browser, server) => {
    const tab = await openChat(browser, server);
    const bob = await openChat(browser, server);
    await join(tab, "Dana");
    await join(bob, "Bob");
    const status = tab.page.locator("#status");
    const says = (text: string) =>
      status.filter({ hasText: new RegExp(`^${text}$`) }).waitFor({
        timeout: 10_000,
      });
    // The first message shown has the page ask for older ones, once.
    const history = tab.page.waitForResponse((res) =>
      new URL(res.url()).pathname === "/messages"
    );
    await send(bob, "Hello.");
    await history;
    // One send fails; then nothing is sent, but the stream brings news.
    await tab.page.route(server.url, (route) => route.abort("failed"));
    const box = tab.page.getByRole("textbox", { name: "Message" });
    await box.fill("lost");
    await box.press("Enter");
    await says("Cannot reach the service");
    await tab.page.unroute(server.url);
    await send(bob, "Still here?");
    await messageIn(tab, "Still here?").waitFor();
    assert.equal(await status.textContent(), "Live");

    // Who is online is only known while live: the list says it is old news.
    const stale = tab.page.getByText("As last heard; may be out of date.");
    assert.equal(await stale.isVisible(), false);
    await tab.page.context().setOffline(true);
    await says("Cannot reach the service");
    await stale.waitFor({ state: "visible" });
    const dot = () =>
      tab.page.locator("#users li").first().evaluate((li) =>
        (globalThis as unknown as BrowserGlobals).getComputedStyle(
          li,
          "::before",
        ).backgroundColor
      );
    assert.equal(await dot(), "rgba(0, 0, 0, 0)", "a hollow dot, not green");
    await tab.page.context().setOffline(false);
    await says("Live");
    await stale.waitFor({ state: "hidden" });
    assert.notEqual(await dot(), "rgba(0, 0, 0, 0)");
  },
);

chatTest(
  "a service that hangs: the status says so within seconds, and Send pressed again meanwhile stores the message once",
  [],
  async (browser, server) => {
    const tab = await openChat(browser, server);
    await join(tab, "Eve");
    const status = tab.page.locator("#status");
    const box = tab.page.getByRole("textbox", { name: "Message" });
    await box.fill("only once");
    Deno.kill(server.process.pid, "SIGSTOP");
    try {
      for (let press = 0; press < 3; press++) {
        await box.press("Enter");
        await new Promise((r) => setTimeout(r, 300));
      }
      await tab.page.getByText("Cannot reach the service").waitFor({
        timeout: 8000,
      });
    } finally {
      Deno.kill(server.process.pid, "SIGCONT");
    }
    await messageIn(tab, "only once").waitFor();
    await status.filter({ hasText: "Live" }).waitFor();
    // Time for any second copy to arrive, had one been sent.
    await new Promise((r) => setTimeout(r, 500));
    const res = await fetch(`${server.url}messages?limit=20`);
    const { messages } = await res.json() as {
      messages: { message: { text: string } }[];
    };
    const copies = messages.filter((m) => m.message.text === "only once");
    assert.equal(copies.length, 1);
    assert.equal(await messageIn(tab, "only once").count(), 1);
    assert.equal(await box.inputValue(), "", "the sent draft is cleared");
  },
);

chatTest(
  "a stored credential the page did not write is dropped, not taken for a name",
  [],
  async (browser, server) => {
    const tab = await openChat(browser, server);
    for (const junk of ["justsomestring", '{"token": oops', "Mallory-"]) {
      await tab.page.evaluate(
        (value) => localStorage.setItem("lms-token", value),
        junk,
      );
      await tab.page.reload();
      await tab.page.getByText("Live").waitFor();
      await tab.page.getByRole("textbox", { name: "Name" }).waitFor();
      assert.equal(
        await tab.page.evaluate(() => localStorage.getItem("lms-token")),
        null,
        junk,
      );
    }
    // No name was registered from the junk: each is free.
    for (const name of ["justsomestrin", "Mallory"]) {
      const res = await fetch(`${server.url}users`, {
        method: "POST",
        body: name,
      });
      await res.body?.cancel();
      assert.equal(res.status, 200, name);
    }
    assert.deepEqual(tab.watch.errors, []);
  },
);

chatTest(
  "ten tabs of one browser share one set of streams: each is live, a post from any goes through and shows in all, and when the leading tab closes another follows on without a gap",
  [],
  async (browser, server) => {
    const context = await browser.newContext();
    const tabs: Tab[] = [];
    // Open sockets by tab (a closed tab's are gone with it), and which tabs ever opened one.
    const open = Array.from({ length: 10 }, () => 0);
    const opened = new Set<number>();
    const socketsAre = async (count: number) => {
      const sum = () =>
        open.reduce((a, b, i) => tabs[i]?.page.isClosed() ? a : a + b, 0);
      for (let i = 0; i < 50 && sum() !== count; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(sum(), count);
    };
    // In the history before any tab opens: the first tab's catch-up, which
    // the others load for themselves too.
    const early = await fetch(`${server.url}users`, {
      method: "POST",
      body: "Early",
    });
    const earlyToken = (await early.json()).token;
    for (let i = 1; i <= 5; i++) {
      const res = await fetch(server.url, {
        method: "POST",
        headers: { "x-messaging-token": earlyToken },
        body: JSON.stringify({ text: `before the tabs ${i}` }),
      });
      await res.body?.cancel();
    }
    for (let i = 0; i < 10; i++) {
      const page = await context.newPage();
      page.setDefaultTimeout(5000);
      page.on("websocket", (socket) => {
        open[i]!++;
        opened.add(i);
        socket.on("close", () => open[i]!--);
      });
      const watch = watchPage(page, [new URL(server.url).origin]);
      await page.goto(`${server.url}chat`);
      await page.getByText("Live").waitFor();
      tabs.push({ page, watch });
    }
    await join(tabs[0]!, "Tabby");
    for (const tab of tabs) {
      await tab.page.getByText("Signed in as Tabby").waitFor();
    }
    // The messages and the quote, once for the whole browser.
    await socketsAre(2);
    assert.deepEqual([...opened], [0]);

    for (const tab of tabs) {
      const texts = await tab.page.locator("#messages .message .text")
        .allTextContents();
      assert.deepEqual(
        texts,
        [1, 2, 3, 4, 5].map((i) => `before the tabs ${i}`),
        "each message of the catch-up once",
      );
    }
    await send(tabs[9]!, "from the tenth tab");
    for (const tab of tabs) {
      await messageIn(tab, "from the tenth tab").waitFor();
    }

    // The leader goes; posts made meanwhile reach every other tab, once.
    const other = await fetch(`${server.url}users`, {
      method: "POST",
      body: "Poster",
    });
    const { token } = await other.json();
    await tabs[0]!.page.close();
    for (let i = 1; i <= 3; i++) {
      const res = await fetch(server.url, {
        method: "POST",
        headers: { "x-messaging-token": token },
        body: JSON.stringify({ text: `after the leader ${i}` }),
      });
      await res.body?.cancel();
    }
    for (const tab of tabs.slice(1)) {
      for (let i = 1; i <= 3; i++) {
        await messageIn(tab, `after the leader ${i}`).waitFor();
        assert.equal(await messageIn(tab, `after the leader ${i}`).count(), 1);
      }
      assert.equal(await messageIn(tab, "from the tenth tab").count(), 1);
      assert.deepEqual(tab.watch.errors, []);
    }
    // The next leader's pair.
    await socketsAre(2);
    assert.equal(opened.size, 2);
    // Leave in one tab signs every tab out, and each says why.
    await tabs[5]!.page.getByRole("button", { name: "Leave" }).click();
    for (const tab of [...tabs.slice(1, 5), ...tabs.slice(6)]) {
      await tab.page.getByText("Signed out in another tab.").waitFor();
      await tab.page.getByRole("textbox", { name: "Name" }).waitFor();
    }
    // The tab that left says nothing of another tab.
    await tabs[5]!.page.getByRole("textbox", { name: "Name" }).waitFor();
    assert.equal(
      await tabs[5]!.page.getByText("Signed out in another tab.").count(),
      0,
    );
    await context.close();
  },
);

/** The paths of the streams `page` follows, by transport, from now on. */
function streamsOf(page: Page) {
  const sockets: string[] = [];
  const eventStreams: string[] = [];
  page.on(
    "websocket",
    (socket) => sockets.push(new URL(socket.url()).pathname),
  );
  page.on("request", (request) => {
    const path = new URL(request.url()).pathname;
    if (path.endsWith("/events")) eventStreams.push(path);
  });
  return { sockets, eventStreams };
}

/** Waits, at most 5 s, until `GET /users/online` lists exactly `names`. */
async function onlineAre(
  server: RunningServer,
  token: string,
  names: string[],
) {
  let online: unknown;
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${server.url}users/online`, {
      headers: { "x-messaging-token": utf8Header(token) },
    });
    online = (await res.json()).online;
    if (JSON.stringify(online) === JSON.stringify(names)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(online, names);
}

chatTest(
  "the page follows both streams over WebSockets, the signed-in user online through the token frame, and resumes without loss",
  [],
  async (browser, server) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(5000);
    const streams = streamsOf(page);
    const watch = watchPage(page, [new URL(server.url).origin]);
    await page.goto(`${server.url}chat`);
    await page.getByText("Live").waitFor();
    const tab = { page, watch };
    await join(tab, "Ann");
    const other = await fetch(`${server.url}users`, {
      method: "POST",
      body: "Bob",
    });
    const { token } = await other.json();
    await onlineAre(server, token, ["Ann"]);
    await page.locator("#users li", { hasText: "Ann" }).waitFor();

    const post = async (text: string) => {
      const res = await fetch(server.url, {
        method: "POST",
        headers: { "x-messaging-token": token },
        body: JSON.stringify({ text }),
      });
      await res.body?.cancel();
    };
    await post("one");
    await messageIn(tab, "one").waitFor({ timeout: LIVE_MS });
    // Leaving opens the stream anew, anonymously: it resumes after "one",
    // so nothing is shown twice and what came meanwhile is shown.
    await page.getByRole("button", { name: "Leave" }).click();
    await page.getByRole("textbox", { name: "Name" }).waitFor();
    await post("two");
    await messageIn(tab, "two").waitFor({ timeout: LIVE_MS });
    assert.equal(await messageIn(tab, "one").count(), 1);
    await onlineAre(server, token, []);

    assert.deepEqual(streams.eventStreams, [], "no event stream was opened");
    assert.ok(streams.sockets.includes("/events"), String(streams.sockets));
    assert.ok(
      streams.sockets.includes("/quote/events"),
      String(streams.sockets),
    );
    assert.deepEqual(watch.errors, []);
    assert.deepEqual(watch.foreignRequests, []);
  },
);

chatTest(
  "without WebSocket the page follows with EventSource and fetch: live messages, the quote, and its user online",
  [],
  async (browser, server) => {
    const ann = await openChat(browser, server, "light", true);
    const bob = await openChat(browser, server, "light", true);
    const streams = streamsOf(bob.page);
    await join(ann, "Ann");
    await join(bob, "Bob");
    const token = await bob.page.evaluate(() =>
      localStorage.getItem("lms-token")
    );
    await onlineAre(server, token!, ["Ann", "Bob"]);
    await ann.page.locator("#users li", { hasText: "Bob" }).waitFor();
    await send(bob, "over EventSource");
    await messageIn(ann, "over EventSource").waitFor({ timeout: LIVE_MS });
    await bob.page.getByRole("textbox", { name: "Quote" }).fill("Be brief.");
    await bob.page.getByRole("button", { name: "Set quote" }).click();
    await ann.page.locator("#quote", { hasText: "Be brief." }).waitFor({
      timeout: LIVE_MS,
    });
    assert.equal(await ann.page.locator("#status").textContent(), "Live");
    assert.deepEqual(streams.sockets, []);
    assert.ok(streams.eventStreams.includes("/events"));
    for (const tab of [ann, bob]) {
      assert.deepEqual(tab.watch.errors, []);
      assert.deepEqual(tab.watch.foreignRequests, []);
    }
  },
);
