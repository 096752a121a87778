/**
 * `deno task screenshots`: the chat page's pictures in `docs/`, taken in
 * real Chromium against the real program mid-conversation: desktop light,
 * phone-width dark, two people side by side, and who is online after one
 * more joined and another came and went.
 * @module
 */

import {
  type Browser,
  browserMissing,
  launchBrowser,
  type Page,
} from "../tests/_support/browser.ts";
import { type RunningServer, startServer } from "../tests/_support/program.ts";

const DOCS = new URL("../docs/", import.meta.url);

if (browserMissing) {
  console.error(`error: ${browserMissing}`);
  Deno.exit(1);
}

async function open(
  browser: Browser,
  server: RunningServer,
  viewport: { width: number; height: number },
  colorScheme: "light" | "dark",
): Promise<Page> {
  const context = await browser.newContext({ viewport, colorScheme });
  const page = await context.newPage();
  await page.goto(`${server.url}chat`);
  await page.getByText("Live").waitFor();
  return page;
}

async function join(page: Page, name: string): Promise<void> {
  await page.getByRole("textbox", { name: "Name" }).fill(name);
  await page.keyboard.press("Enter");
  await page.getByRole("textbox", { name: "Message" }).waitFor();
}

async function say(page: Page, text: string, red = false): Promise<void> {
  await page.getByRole("radio", { name: red ? "Red" : "Black" }).check();
  await page.getByRole("textbox", { name: "Message" }).fill(text);
  await page.keyboard.press("Enter");
  await page.getByRole("log").getByText(text, { exact: true }).waitFor();
}

const server = await startServer(["--quiet"]);
const browser = await launchBrowser();
try {
  const ann = await open(
    browser,
    server,
    { width: 1280, height: 800 },
    "light",
  );
  const bob = await open(browser, server, { width: 360, height: 740 }, "dark");
  await join(ann, "Ann");
  await join(bob, "Bob");
  await ann.getByRole("textbox", { name: "Quote" }).fill(
    "Simple things should be simple.",
  );
  await ann.getByRole("button", { name: "Set quote" }).click();
  await say(ann, "Morning! Is the deploy still on for ten?");
  await say(bob, "Yes, ten sharp. I'll watch the dashboards.");
  await say(ann, "The staging database is read-only until then.", true);
  await say(bob, "Noted, thanks.");
  await say(ann, "Thanks, see you at ten.");
  await bob.getByRole("textbox", { name: "Message" }).fill("On my way");
  for (const page of [ann, bob]) {
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.locator("#users li", { hasText: "Bob" }).waitFor();
    await page.locator("#quote", { hasText: "Simple things" }).waitFor();
  }
  const desktop = await ann.screenshot();
  const phone = await bob.screenshot({ fullPage: true });
  await Deno.writeFile(new URL("chat-desktop-light.png", DOCS), desktop);
  await Deno.writeFile(new URL("chat-phone-dark.png", DOCS), phone);

  // Both people at once: the two pictures side by side on one canvas.
  const canvas = await browser.newPage({
    viewport: { width: 1680, height: 820 },
  });
  const image = (png: Uint8Array) =>
    `<img src="data:image/png;base64,${png.toBase64()}">`;
  await canvas.setContent(
    `<body style="margin:0;padding:10px;background:#888;display:flex;gap:10px;align-items:flex-start">${
      image(desktop)
    }${image(phone)}</body>`,
  );
  await Deno.writeFile(
    new URL("chat-two-tabs.png", DOCS),
    await canvas.screenshot(),
  );

  // Who is online: Cleo joins and speaks; Dee joins, then closes the tab
  // without leaving, and is listed no more.
  const cleo = await open(
    browser,
    server,
    { width: 800, height: 600 },
    "light",
  );
  await join(cleo, "Cleo");
  await say(cleo, "Joining late, catching up on the thread.");
  const dee = await open(browser, server, { width: 800, height: 600 }, "light");
  await join(dee, "Dee");
  await ann.locator("#users li", { hasText: "Dee" }).waitFor();
  await dee.context().close();
  await ann.locator("#users li", { hasText: "Dee" }).waitFor({
    state: "detached",
  });
  await ann.locator("#users li", { hasText: "Cleo" }).waitFor();
  await Deno.writeFile(
    new URL("chat-online.png", DOCS),
    await ann.screenshot(),
  );
  console.log(
    "wrote docs/chat-desktop-light.png, chat-phone-dark.png, chat-two-tabs.png, chat-online.png",
  );
} finally {
  await browser.close();
  await server.stop();
}
