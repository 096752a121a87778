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
  const term: Terminal = {
    readLine: () => Promise.resolve(null),
    showMessage() {},
    notice: (text) => notices.push(text),
    setPrompt() {},
    restore() {},
  };
  const chat: Chat = { client, term, color: "black" };
  return { chat, notices, fetchFn };
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
