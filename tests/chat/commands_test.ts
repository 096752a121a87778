import assert from "node:assert/strict";
import {
  actionOf,
  type Chat,
  presenceNotice,
} from "../../src/chat/commands.ts";
import type { Terminal } from "../../src/chat/terminal.ts";
import { MessagingClient } from "../../src/client/client.ts";
import { createHandler } from "../../src/program/app.ts";

/** A chat on a service with no socket, its notices kept. */
function fakeChat() {
  const handler = createHandler();
  const fetchFn: typeof fetch = (input, init) =>
    Promise.resolve(handler(new Request(input, init)));
  const client = new MessagingClient("http://chat.test/", { fetch: fetchFn });
  const notices: string[] = [];
  /** The texts of each page `/more` showed, as shown. */
  const older: string[][] = [];
  const term: Terminal = {
    readLine: () => Promise.resolve(null),
    showMessage() {},
    showOlder: (messages) => older.push(messages.map((m) => m.text)),
    notice: (text) => notices.push(text),
    setPrompt() {},
    restore() {},
  };
  const chat: Chat = { client, term, color: "black" };
  return { chat, notices, fetchFn, older };
}

Deno.test("a line is sent in the color picked, //text sends /text, and an unknown /word is no message", async () => {
  const { chat, notices } = fakeChat();
  await chat.client.register("ann");
  await actionOf("/red", chat)();
  assert.equal(chat.color, "red");
  await actionOf("hi", chat)();
  await actionOf("//x", chat)();
  await actionOf("/constructor", chat)();
  assert.deepEqual(await chat.client.messages(), [
    { text: "/x", color: "red", user: "ann" },
    { text: "hi", color: "red", user: "ann" },
  ]);
  assert.equal(notices[0], "Now sending in red.");
  assert.match(notices[1] ?? "", /^Unknown command \/constructor: \/help/);
});

Deno.test("/users says who is online, then who else is registered", async () => {
  const { chat, notices, fetchFn } = fakeChat();
  await chat.client.register("ann");
  await new MessagingClient("http://chat.test/", { fetch: fetchFn })
    .register("bob");
  await actionOf("/users", chat)();
  assert.deepEqual(notices, [
    "Online: nobody; also registered: ann, bob",
  ]);
});

Deno.test("presence is told of others, and of this chat only when it was unregistered", () => {
  assert.equal(
    presenceNotice({ name: "bob", online: true }, "ann"),
    "bob is online.",
  );
  assert.equal(
    presenceNotice({ name: "bob", online: false }, "ann"),
    "bob went offline.",
  );
  assert.equal(
    presenceNotice({ name: "bob", registered: false }, "ann"),
    "bob left.",
  );
  assert.equal(presenceNotice({ name: "ann", online: true }, "ann"), undefined);
  assert.equal(
    presenceNotice({ name: "ann", registered: false }, "ann"),
    "You (ann) were unregistered.",
  );
});

/** The texts "from".."to", as numbers are posted below. */
const texts = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${from + i}`);

Deno.test("/more shows the next older page each time, oldest first, then says there is none", async () => {
  const { chat, notices, older } = fakeChat();
  await chat.client.register("ann");
  for (let i = 1; i <= 25; i++) await chat.client.post(`${i}`);
  // Nothing shown yet: it starts from the newest.
  for (let i = 0; i < 4; i++) await actionOf("/more", chat)();
  assert.deepEqual(older, [texts(16, 25), texts(6, 15), texts(1, 5)]);
  assert.deepEqual(notices, [
    "10 older messages shown; /more for more.",
    "10 older messages shown; /more for more.",
    "5 older messages shown; none before them.",
    "No older messages.",
  ]);
});

Deno.test("/more goes on below the oldest message shown, and an empty history has none", async () => {
  const { chat, notices, older } = fakeChat();
  await actionOf("/more", chat)();
  assert.deepEqual([older, notices], [[], ["No older messages."]]);
  await chat.client.register("ann");
  for (let i = 1; i <= 25; i++) await chat.client.post(`${i}`);
  chat.oldestShown = () => 21; // 21 to 25 are on the screen
  await actionOf(" /more ", chat)();
  assert.deepEqual(older, [texts(11, 20)]);
  assert.equal(chat.olderBefore, 11);
  // Then on below the page shown, whatever the screen holds since.
  chat.oldestShown = () => 30;
  await actionOf("/more", chat)();
  assert.deepEqual(older, [texts(11, 20), texts(1, 10)]);
});
