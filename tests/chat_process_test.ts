/**
 * The terminal chat driven without a human: over a pipe, as scripts use it,
 * and in a real terminal through tmux when tmux is installed.
 */

import assert from "node:assert/strict";
import stringWidth from "string-width";
import { MessagingClient } from "../src/client/client.ts";
import {
  freePort,
  type RunningServer,
  startServer,
} from "./_support/program.ts";

const CHAT = new URL("../chat.ts", import.meta.url).pathname;

/** The chat as a subprocess with piped standard input and output. */
function startChat(args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", CHAT, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const input = child.stdin.getWriter();
  let out = "";
  const outDone = child.stdout.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (out += chunk) }),
  );
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return {
    output: () => out,
    async type(line: string) {
      await input.write(new TextEncoder().encode(`${line}\n`));
    },
    /** Waits, at most 10 s, until the output contains `text`. */
    async waitFor(text: string) {
      for (let i = 0; i < 200 && !out.includes(text); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(out.includes(text), `no "${text}" in:\n${out}`);
    },
    async close() {
      await input.close().catch(() => {});
    },
    kill(signal: Deno.Signal) {
      child.kill(signal);
    },
    async status() {
      const [{ code }, stderr] = await Promise.all([
        child.status,
        new Response(child.stderr).text(),
        outDone,
      ]);
      clearTimeout(timer);
      return { code, stderr };
    },
  };
}

/** Waits for the chat to exit, and checks it failed with `message` alone on standard error. */
async function assertFails(
  chat: ReturnType<typeof startChat>,
  message: string,
) {
  const { code, stderr } = await chat.status();
  assert.equal(code, 1);
  assert.equal(stderr, `error: ${message}\n`);
}

/** Waits, at most 5 s, until `client` is told exactly `names` are online. */
async function onlineAre(client: MessagingClient, names: string[]) {
  let online: string[] = [];
  for (let i = 0; i < 100; i++) {
    online = await client.online();
    if (JSON.stringify(online) === JSON.stringify(names)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(online, names);
}

async function withServer(fn: (server: RunningServer) => Promise<void>) {
  const server = await startServer(["--quiet"]);
  try {
    await fn(server);
  } finally {
    await server.stop();
  }
}

Deno.test("chat over a pipe: asks again for a refused name, sends, receives, lists users, and /quit unregisters", async () => {
  await withServer(async (server) => {
    const bob = new MessagingClient(server.url);
    await bob.register("bob");
    const chat = startChat([`--url=${server.url}`]);
    await chat.waitFor("Your name:");
    await chat.type("bob");
    await chat.waitFor('"bob" cannot join: This user exists!');
    await chat.type("a-b");
    await chat.waitFor("cannot join: Name must not contain '-'");
    await chat.type("alice");
    await chat.waitFor("Joined as alice.");

    await chat.type("hello from alice");
    await chat.type("/red");
    await chat.waitFor("Now sending in red.");
    await chat.type("alice in red");
    await chat.waitFor("alice (red): alice in red");
    await bob.post("hi alice");
    await chat.waitFor("bob: hi alice");
    const texts = (await bob.messages()).map((m) => [m.user, m.text, m.color]);
    assert.deepEqual(texts.slice(0, 3), [
      ["bob", "hi alice", "black"],
      ["alice", "alice in red", "red"],
      ["alice", "hello from alice", "black"],
    ]);

    await chat.type("/users");
    await chat.waitFor("* Online: alice; also registered: bob\n");
    await chat.type("/quit");
    const { code, stderr } = await chat.status();
    assert.equal(code, 0, stderr);
    assert.match(chat.output(), /Goodbye, alice\.\n$/);
    assert.deepEqual(await bob.users(), ["bob"]);
  });
});

Deno.test("chat over a pipe: input given all at once lists the chat itself online, not merely registered", async () => {
  await withServer(async (server) => {
    const chat = startChat([`--url=${server.url}`]);
    await chat.type("carol");
    await chat.type("/users");
    await chat.type("/quit");
    const { code, stderr } = await chat.status();
    assert.equal(code, 0, stderr);
    assert.match(chat.output(), /\* Online: carol\n/);
  });
});

Deno.test("chat tells who comes online, goes offline and leaves; /users lists who is online; the chat itself is online while it runs", async () => {
  await withServer(async (server) => {
    const chat = startChat([`--url=${server.url}`, "--name=alice"]);
    await chat.waitFor("Joined as alice.");
    const bob = new MessagingClient(server.url);
    await bob.register("bob");
    await onlineAre(bob, ["alice"]);
    const following = new AbortController();
    const stream = (async () => {
      for await (const _ of bob.events({ signal: following.signal }));
    })();
    await chat.waitFor("* bob is online.\n");
    await chat.type("/users");
    await chat.waitFor("* Online: alice, bob\n");
    following.abort();
    await stream;
    await chat.waitFor("* bob went offline.\n");
    await bob.unregister();
    await chat.waitFor("* bob left.\n");
    // Its own coming online is not told.
    assert.doesNotMatch(chat.output(), /alice is online/);
    await chat.type("/quit");
    assert.equal((await chat.status()).code, 0);
  });
});

Deno.test("chat over a pipe: any other line is a message, and the end of input leaves and unregisters", async () => {
  await withServer(async (server) => {
    const chat = startChat([`--url=${server.url}`, "--name=eve"]);
    await chat.waitFor("Joined as eve.");
    // Only the listed commands are commands: this is a message.
    await chat.type("constructor");
    await chat.waitFor("eve: constructor");
    await chat.close();
    assert.equal((await chat.status()).code, 0);
    const watcher = new MessagingClient(server.url);
    await watcher.register("watcher");
    assert.deepEqual(await watcher.users(), ["watcher"]);
  });
});

Deno.test("chat keeps retrying while the service is down, then joins", async () => {
  const port = freePort();
  const chat = startChat([`--url=http://127.0.0.1:${port}/`, "--name=early"]);
  await chat.waitFor("is unreachable; retrying every second.");
  const server = await startServer(["--quiet", `--port=${port}`]);
  try {
    await chat.waitFor("The service is back.");
    await chat.waitFor("Joined as early.");
    await chat.type("/quit");
    assert.equal((await chat.status()).code, 0);
  } finally {
    await server.stop();
  }
});

Deno.test("chat: an unknown /command is said to be one, and //text sends /text", async () => {
  await withServer(async (server) => {
    const chat = startChat([`--url=${server.url}`, "--name=cmd"]);
    await chat.waitFor("Joined as cmd.");
    await chat.type("/nonsense");
    await chat.waitFor("Unknown command /nonsense: /help lists them");
    await chat.type("/qiut");
    await chat.waitFor("Unknown command /qiut");
    await chat.type("//slashed");
    await chat.waitFor("cmd: /slashed");
    await chat.type("/quit");
    assert.equal((await chat.status()).code, 0);
    const reader = new MessagingClient(server.url);
    assert.deepEqual(
      (await reader.messages()).map((m) => m.text),
      ["/slashed"],
      "no command was posted",
    );
  });
});

Deno.test("chat: with the service down it can be left before joining, by /quit", async () => {
  const port = freePort();
  const chat = startChat([`--url=http://127.0.0.1:${port}/`, "--name=early"]);
  await chat.waitFor("is unreachable; retrying every second.");
  await chat.type("/quit");
  const { code, stderr } = await chat.status();
  assert.equal(code, 0);
  assert.equal(stderr, "");
});

Deno.test("chat over a pipe with no service: the input ends with nothing sent, it says so and exits 1", async () => {
  const port = freePort();
  const url = `http://127.0.0.1:${port}/`;
  const silent = startChat([`--url=${url}`, "--name=early"]);
  await silent.waitFor("is unreachable; retrying every second.");
  await silent.close();
  await assertFails(
    silent,
    `the service at ${url} could not be reached; nothing was sent.`,
  );

  // As a script runs it: lines piped in, the input closed at once.
  const piped = startChat([`--url=${url}`, "--name=early"]);
  await piped.type("hello");
  await piped.type("/red");
  await piped.type("world");
  await piped.close();
  await assertFails(
    piped,
    `the service at ${url} could not be reached; nothing was sent (3 lines read).`,
  );
  assert.doesNotMatch(piped.output(), /Goodbye|Joined/);
});

Deno.test("chat over a pipe: input that ends before a name is accepted exits 1, saying so", async () => {
  await withServer(async (server) => {
    const chat = startChat([`--url=${server.url}`]);
    await chat.waitFor("Your name:");
    await chat.type("a-b");
    await chat.waitFor("cannot join");
    await chat.close();
    await assertFails(
      chat,
      "the input ended before a name was accepted; nothing was sent.",
    );
  });
});

Deno.test("chat over a pipe: a line the service never got makes the exit status 1", async () => {
  const server = await startServer(["--quiet"]);
  const chat = startChat([`--url=${server.url}`, "--name=gone"]);
  try {
    await chat.waitFor("Joined as gone.");
    await chat.type("sent");
    await chat.waitFor("gone: sent");
  } finally {
    await server.stop();
  }
  await chat.type("lost");
  await chat.waitFor("Not sent, the service is unreachable: lost");
  await chat.close();
  await assertFails(chat, "1 line was not sent.");
});

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  Deno.test(`chat: ${signal} leaves before joining, and unregisters once joined`, async () => {
    const port = freePort();
    const early = startChat([`--url=http://127.0.0.1:${port}/`, "--name=x"]);
    await early.waitFor("is unreachable; retrying every second.");
    early.kill(signal);
    assert.equal((await early.status()).code, 0);

    await withServer(async (server) => {
      const chat = startChat([`--url=${server.url}`, "--name=hup"]);
      await chat.waitFor("Joined as hup.");
      chat.kill(signal);
      assert.equal((await chat.status()).code, 0);
      await chat.waitFor("Goodbye, hup.");
      const other = new MessagingClient(server.url);
      await other.register("other");
      assert.deepEqual(await other.users(), ["other"], "hup unregistered");
    });
  });
}

Deno.test("chat: --help prints the usage and exits 0, after a leading -- too (deno task chat -- --help)", async () => {
  for (const args of [["--help"], ["--", "--help"]]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-net", CHAT, ...args],
      stdin: "null",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.match(new TextDecoder().decode(out.stdout), /^Usage: /);
  }
});

Deno.test("chat: a URL with no messaging service is said so, and it exits 1", async () => {
  const server = await startServer(["--quiet", "--service=quote"]);
  try {
    const chat = startChat([`--url=${server.url}`, "--name=lost"]);
    await chat.waitFor("serves no messaging service");
    assert.equal((await chat.status()).code, 1);
  } finally {
    await server.stop();
  }
});

Deno.test("chat: after the service restarts it joins again with the same name, follows and sends", async () => {
  const port = freePort();
  const args = ["--quiet", `--port=${port}`];
  let server = await startServer(args);
  const chat = startChat([`--url=http://127.0.0.1:${port}/`, "--name=phoenix"]);
  try {
    await chat.waitFor("Joined as phoenix.");
    await server.stop();
    server = await startServer(args);
    // Its stream comes back with the forgotten token, is refused, and the
    // chat joins again by itself, then follows as the new user.
    await chat.waitFor("joined again as phoenix");
    const reader = new MessagingClient(server.url);
    await reader.register("reader");
    await onlineAre(reader, ["phoenix"]);
    await reader.post("welcome back");
    await chat.waitFor("reader: welcome back");
    await chat.type("still here");
    await chat.waitFor("phoenix: still here");
    assert.deepEqual(
      (await reader.messages()).map((m) => [m.user, m.text]),
      [["phoenix", "still here"], ["reader", "welcome back"]],
    );
    assert.equal(chat.output().match(/joined again as phoenix/g)?.length, 1);
    await chat.type("/quit");
    assert.equal((await chat.status()).code, 0);
  } finally {
    await server.stop();
  }
});

/**
 * The chat in a real terminal (tmux) of `width` × `height`, joined as
 * `name`; `waitForScreen` reads the screen (with its colour codes when
 * `escapes`) until `pattern` shows.
 */
async function terminalChat(
  server: RunningServer,
  name: string,
  [width, height]: [number, number],
  escapes = false,
) {
  const socket = `lms-test-${crypto.randomUUID().slice(0, 8)}`;
  const tmux = (...args: string[]) =>
    new Deno.Command("tmux", { args: ["-L", socket, ...args] }).output();
  const screen = async () =>
    new TextDecoder().decode(
      (await tmux(
        "capture-pane",
        "-p",
        ...(escapes ? ["-e"] : []),
        "-t",
        "chat",
      ))
        .stdout,
    );
  const waitForScreen = async (pattern: RegExp) => {
    let shown = "";
    for (let i = 0; i < 200; i++) {
      shown = await screen();
      if (pattern.test(shown)) return shown;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail(`no ${pattern} on the screen:\n${shown}`);
  };
  const started = await tmux(
    "new-session",
    "-d",
    "-s",
    "chat",
    "-x",
    String(width),
    "-y",
    String(height),
    `${Deno.execPath()} run --allow-net ${CHAT} --url=${server.url} --name=${name}; sleep 5`,
  );
  assert.ok(started.success, new TextDecoder().decode(started.stderr));
  return { tmux, waitForScreen };
}

const tmuxMissing = !new Deno.Command("sh", {
  args: ["-c", "command -v tmux"],
  stdout: "null",
}).outputSync().success;
if (tmuxMissing) {
  console.warn(
    "\n!!! SKIPPING the chat-in-a-terminal test: tmux is not on PATH (apt-get install tmux) !!!\n",
  );
}

Deno.test({
  name:
    "chat in a real terminal (tmux): red messages in red, typing undisturbed by refreshes, Ctrl-U clears the line, Backspace by grapheme, redraw on resize, Ctrl-C leaves",
  ignore: tmuxMissing,
  async fn() {
    await withServer(async (server) => {
      const { tmux, waitForScreen } = await terminalChat(
        server,
        "carol",
        [100, 20],
        true,
      );
      try {
        await waitForScreen(/Joined as carol\./);
        const bob = new MessagingClient(server.url);
        await bob.register("bob");
        await bob.post("plain from bob");
        await bob.post("red from bob", { color: "red" });
        // Half a line typed while the messages refresh stays as typed.
        await tmux("send-keys", "-t", "chat", "-l", "junk");
        await tmux("send-keys", "-t", "chat", "C-u");
        await tmux("send-keys", "-t", "chat", "-l", "half typed");
        const shown = await waitForScreen(/red from bob/);
        const RED = "\x1b[31m";
        assert.ok(shown.includes(`${RED}bob: red from bob`), shown);
        assert.ok(!shown.includes(`${RED}bob: plain from bob`), shown);
        assert.match(shown, /bob: plain from bob/);
        await waitForScreen(/> half typed/);
        await tmux("send-keys", "-t", "chat", " then sent", "Enter");
        await waitForScreen(/carol: half typed then sent/);
        assert.equal((await bob.messages())[0]?.text, "half typed then sent");

        // Backspace removes a whole grapheme cluster (👍🏽 is two code
        // points), and the line is redrawn, wide characters included.
        await tmux("send-keys", "-t", "chat", "-l", "ok 日本👍🏽");
        await waitForScreen(/> ok 日本👍🏽/);
        await tmux("send-keys", "-t", "chat", "BSpace", "BSpace");
        await tmux("send-keys", "-t", "chat", "-l", "語");
        await tmux("send-keys", "-t", "chat", "Enter");
        await waitForScreen(/carol: ok 日語/);
        assert.equal((await bob.messages())[0]?.text, "ok 日語");

        // Notices do not hide one another: /help and /users both show.
        await tmux("send-keys", "-t", "chat", "/users", "Enter");
        await tmux("send-keys", "-t", "chat", "/help", "Enter");
        const both = await waitForScreen(/\/red, \/black: the color/);
        assert.match(both, /Online: carol; also registered: bob/);

        await bob.post("日本語のとても長いメッセージです、端末の幅を超えます");
        await waitForScreen(/bob: 日本語/);
        // A narrow terminal: the title is cut to the width, and the screen
        // is redrawn on the resize itself.
        await tmux("resize-window", "-t", "chat", "-x", "40", "-y", "10");
        const narrow = await waitForScreen(/^Chat at .*…$/m);
        assert.match(narrow, /^Chat at /, "the title stays on the first row");
        assert.ok(
          narrow.split("\n").every((line) => stringWidth(line) <= 40),
          narrow,
        );

        await tmux("send-keys", "-t", "chat", "C-c");
        await waitForScreen(/Goodbye, carol\./);
        assert.deepEqual(await bob.users(), ["bob"]);
      } finally {
        await tmux("kill-server");
      }
    });
  },
});

Deno.test({
  name:
    "chat in a real terminal (tmux): the terminal closing (SIGHUP, and the screen gone with it) still unregisters",
  ignore: tmuxMissing,
  async fn() {
    await withServer(async (server) => {
      const { tmux, waitForScreen } = await terminalChat(
        server,
        "hupper",
        [80, 20],
      );
      const bob = new MessagingClient(server.url);
      await bob.register("bob");
      try {
        await waitForScreen(/Joined as hupper\./);
        assert.ok((await bob.users()).includes("hupper"));
      } finally {
        // The window closes: the chat gets SIGHUP, and its terminal is gone.
        await tmux("kill-server");
      }
      let users: string[] = [];
      for (let i = 0; i < 50; i++) {
        users = await bob.users();
        if (!users.includes("hupper")) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(users, ["bob"]);
    });
  },
});

Deno.test({
  name:
    "chat in a real terminal (tmux): /more starts below the oldest message on the screen, however many came after joining",
  ignore: tmuxMissing,
  async fn() {
    await withServer(async (server) => {
      const bob = new MessagingClient(server.url);
      await bob.register("bob");
      for (let i = 1; i <= 4; i++) await bob.post(`before ${i}`);
      const { tmux, waitForScreen } = await terminalChat(
        server,
        "mo",
        [80, 30],
      );
      try {
        await waitForScreen(/Joined as mo\./);
        await waitForScreen(/bob: before 4/);
        for (let i = 1; i <= 10; i++) await bob.post(`after ${i}`);
        // The screen holds the newest five: after 6 to after 10.
        await waitForScreen(/bob: after 10/);
        await tmux("send-keys", "-t", "chat", "/more", "Enter");
        const shown = await waitForScreen(/older messages? shown/);
        assert.match(shown, /9 older messages shown; none before them\./);
        assert.match(shown, /bob: before 1[\s\S]*bob: after 5/);
      } finally {
        await tmux("kill-server");
      }
    });
  },
});

Deno.test("chat follows over a WebSocket as its user: online while it runs, live messages, no polling, identical messages each shown", async () => {
  const server = await startServer([]);
  try {
    const bob = new MessagingClient(server.url);
    await bob.register("bob");
    const chat = startChat([`--url=${server.url}`, "--name=carol"]);
    await chat.waitFor("Joined as carol.");
    await onlineAre(bob, ["carol"]);
    await bob.post("same");
    await bob.post("same");
    await chat.waitFor("bob: same\nbob: same\n");
    await new Promise((r) => setTimeout(r, 1500));
    const log = server.stderr();
    // 101: the stream was upgraded to a WebSocket, and it was the only one.
    assert.match(log, /GET \/events 101/);
    assert.doesNotMatch(log, /GET \/events 200/);
    assert.doesNotMatch(log, /GET \/ 200/, "the chat never polls GET /");
    await chat.type("/quit");
    assert.equal((await chat.status()).code, 0);
    await onlineAre(bob, []);
  } finally {
    await server.stop();
  }
});

Deno.test("chat over a pipe: /more prints the pages older than the messages shown, oldest first", async () => {
  const server = await startServer(["--quiet", "--service=messaging"]);
  // Posted before the chat joins, so its stream shows the newest five.
  const bob = new MessagingClient(server.url);
  await bob.register("bob");
  for (let i = 1; i <= 17; i++) await bob.post(`m${i}`);
  const chat = startChat([`--url=${server.url}`, "--name=ann"]);
  try {
    await chat.waitFor("bob: m17\n");
    const shown = chat.output();
    assert.ok(!shown.includes("bob: m12\n"), "only m13 to m17 shown");
    await chat.type("/more");
    await chat.waitFor("/more for more.");
    await chat.type("/more");
    await chat.waitFor("none before them.");
    await chat.type("/more");
    await chat.waitFor("No older messages.");
    await chat.type("/quit");
    assert.equal((await chat.status()).code, 0);
    const older = chat.output().slice(shown.length).split("\n")
      .filter((line) => line.startsWith("bob: "));
    const m = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => `bob: m${from + i}`);
    assert.deepEqual(older, [...m(3, 12), ...m(1, 2)]);
  } finally {
    await chat.close();
    await server.stop();
  }
});

Deno.test({
  name:
    "chat in a real terminal (tmux): /more draws the older page above the newest messages, oldest first",
  ignore: tmuxMissing,
  async fn() {
    await withServer(async (server) => {
      const bob = new MessagingClient(server.url);
      await bob.register("bob");
      for (let i = 1; i <= 12; i++) await bob.post(`m${i}`);
      const { tmux, waitForScreen } = await terminalChat(
        server,
        "dan",
        [80, 30],
      );
      try {
        const before = await waitForScreen(/bob: m12/);
        assert.doesNotMatch(before, /bob: m7\b/, "the newest five only");
        await tmux("send-keys", "-t", "chat", "/more", "Enter");
        const shown = await waitForScreen(/none before them/);
        const lines = shown.split("\n").filter((l) => l.startsWith("bob: "));
        assert.deepEqual(
          lines.map((l) => l.trim()),
          Array.from({ length: 12 }, (_, i) => `bob: m${i + 1}`),
        );
        await tmux("send-keys", "-t", "chat", "C-c");
        await waitForScreen(/Goodbye, dan\./);
      } finally {
        await tmux("kill-server");
      }
    });
  },
});
