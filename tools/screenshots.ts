/**
 * `deno task screenshots`: the chat page's pictures in `docs/`, taken in
 * real Chromium against the real program mid-conversation: desktop light,
 * phone-width dark, two people side by side, and who is online after one
 * more joined and another came and went; then the terminal chat, run in
 * tmux beside them, listing who is online (its screen rendered by Chromium).
 * Then the page signed in at each width of {@linkcode WIDTHS}, light and
 * dark, into `bench/results/profiles/page/`, printing each one's document
 * scrollWidth as a Markdown table (`--widths` takes only those).
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
const PROFILE = new URL("../bench/results/profiles/page/", import.meta.url);
/** The widths the page is pictured and measured at. */
const WIDTHS = [320, 390, 768, 1000, 1280, 1920];

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

/** Ends the run early, for `--widths`. */
class Stop extends Error {}

const ESC = "\x1b";

/**
 * A terminal screen as `tmux capture-pane -p -e` gives it, as HTML: text
 * escaped, red (SGR 31) in red until reset; the chat uses no other style.
 */
function screenHtml(screen: string): string {
  let red = false;
  let html = "";
  // deno-lint-ignore no-control-regex -- the escape sequences are what it reads
  for (const part of screen.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith(`${ESC}[`)) {
      const codes = part.slice(2, -1).split(";");
      if (codes.includes("31")) red = true;
      else if (codes.some((c) => c === "" || c === "0" || c === "39")) {
        red = false;
      }
      continue;
    }
    const text = part.replaceAll("&", "&amp;").replaceAll("<", "&lt;");
    html += red ? `<span style="color:#e05555">${text}</span>` : text;
  }
  return html;
}

/** The terminal chat as `name`, in a 96×14 tmux window, once it shows `/users`' answer. */
async function terminalScreen(url: string, name: string): Promise<string> {
  const socket = `lms-shots-${crypto.randomUUID().slice(0, 8)}`;
  const tmux = (...args: string[]) =>
    new Deno.Command("tmux", { args: ["-L", socket, ...args] }).output();
  const chat = new URL("../chat.ts", import.meta.url).pathname;
  await tmux(
    "new-session",
    "-d",
    "-s",
    "chat",
    "-x",
    "96",
    "-y",
    "14",
    `${Deno.execPath()} run --allow-net ${chat} --url=${url} --name=${name}`,
  );
  try {
    const screen = async () =>
      new TextDecoder().decode(
        (await tmux("capture-pane", "-p", "-e", "-t", "chat")).stdout,
      );
    let shown = "";
    for (let i = 0; i < 100 && !shown.includes("Joined as"); i++) {
      await new Promise((r) => setTimeout(r, 50));
      shown = await screen();
    }
    await tmux("send-keys", "-t", "chat", "/users", "Enter");
    for (let i = 0; i < 100 && !shown.includes("Online:"); i++) {
      await new Promise((r) => setTimeout(r, 50));
      shown = await screen();
    }
    if (!shown.includes("Online:")) throw new Error(`no /users:\n${shown}`);
    return shown;
  } finally {
    await tmux("send-keys", "-t", "chat", "/quit", "Enter");
    await new Promise((r) => setTimeout(r, 500));
    await tmux("kill-server");
  }
}

/**
 * The page at every width, light and dark, signed in with a few messages:
 * small JPEGs, and the table of document scrollWidth against the width.
 */
async function widthSet(browser: Browser, server: RunningServer) {
  await Deno.mkdir(PROFILE, { recursive: true });
  const rows = [
    "| width | light scrollWidth | dark scrollWidth |",
    "|--:|--:|--:|",
  ];
  for (const width of WIDTHS) {
    const measured: number[] = [];
    for (const scheme of ["light", "dark"] as const) {
      const height = width < 700 ? 740 : 800;
      const page = await open(browser, server, { width, height }, scheme);
      await join(page, `W${width}${scheme}`);
      await say(page, `Seen at ${width} px in ${scheme}.`);
      await page.locator("#users li").first().waitFor();
      measured.push(
        await page.evaluate<number>("document.documentElement.scrollWidth"),
      );
      await Deno.writeFile(
        new URL(`chat-${width}-${scheme}.jpg`, PROFILE),
        await page.screenshot({ type: "jpeg", quality: 55 }),
      );
      await page.context().close();
    }
    rows.push(`| ${width} | ${measured.join(" | ")} |`);
  }
  console.log(rows.join("\n"));
}

const server = await startServer(["--quiet"]);
const browser = await launchBrowser();
try {
  if (Deno.args.includes("--widths")) {
    await widthSet(browser, server);
    throw new Stop();
  }
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
  await say(bob, "Dave is on the terminal today.");
  const screen = await terminalScreen(server.url, "Dave");
  const terminal = await browser.newPage({
    viewport: { width: 900, height: 300 },
  });
  await terminal.setContent(
    `<body style="margin:0;background:#1e1e1e"><pre style="margin:0;padding:12px;color:#ddd;font:15px/1.35 'DejaVu Sans Mono',monospace;width:max-content">${
      screenHtml(screen)
    }</pre></body>`,
  );
  await Deno.writeFile(
    new URL("chat-terminal-online.png", DOCS),
    await terminal.locator("pre").screenshot(),
  );
  console.log(
    "wrote docs/chat-desktop-light.png, chat-phone-dark.png, chat-two-tabs.png, chat-online.png, chat-terminal-online.png",
  );
  await widthSet(browser, server);
} catch (error) {
  if (!(error instanceof Stop)) throw error;
} finally {
  await browser.close();
  await server.stop();
}
