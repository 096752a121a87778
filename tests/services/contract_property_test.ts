/**
 * Property tests: random sequences of every call, with the contract's edge
 * cases among the names and bodies, run against the handler and against a
 * small model of the contract written here from CONTRACT.md. Any difference
 * fails with the shortest sequence fast-check finds. Then the same calls run
 * concurrently, checked against what the answers say happened.
 */
import { lookOf } from "../../src/identity/name_skeleton.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { createHandler } from "../../src/program/app.ts";
import type { Store } from "../../src/store/store.ts";
import { type Answer, call, storeTest } from "../_support/call.ts";

const SEED = 20261123;

// ---- the generators ----

const knownNames = ["ann", "bob", "José", "日本語", "👍🏽"];
const edgeNames = [
  "",
  "a-b",
  "-",
  " ann",
  "ann ",
  "tab\there",
  "nul\u0000",
  "del\u007f",
  "x".repeat(64),
  "x".repeat(65),
  "é".repeat(65),
  "Ann",
  "__proto__",
  "constructor",
  // Look like known names: Cyrillic а, and a decomposed é.
  "\u0430nn",
  "b\u043eb",
  "Jose\u0301",
  "Jos\u00e9",
];
const nameArb = fc.oneof(
  { arbitrary: fc.constantFrom(...knownNames), weight: 6 },
  { arbitrary: fc.constantFrom(...edgeNames), weight: 2 },
  { arbitrary: fc.string({ maxLength: 70, unit: "grapheme" }), weight: 1 },
);

const bodyArb = fc.oneof(
  {
    arbitrary: fc.record({
      text: fc.string({ maxLength: 20 }),
      color: fc.constantFrom("red", "black", undefined),
    }).map((value) => JSON.stringify(value)),
    weight: 4,
  },
  fc.record({
    text: fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.constant(null),
    ),
    color: fc.constantFrom("red", "black", "blue", "", 1, null, undefined),
    user: fc.constantFrom("mallory", undefined),
    extra: fc.constantFrom("kept", undefined),
  }, { requiredKeys: [] }).map((value) =>
    JSON.stringify(value, (_, v) => v === undefined ? undefined : v)
  ),
  fc.constantFrom(
    "not json",
    "",
    "[]",
    "null",
    '"text"',
    '{"text":"proto","__proto__":{"x":1}}',
    '{"text":"dup","text":"second"}',
    '{"text":"\\ud800"}',
    '{"text":"\\ud83d\\ude80","\\udc00":1}',
    '{"text":"\\ud83d\\ude80 \\u00e9"}',
  ),
  fc.json({ maxDepth: 2 }),
);

/** Every string and key of a parsed value is well-formed UTF-16. */
const wellFormed = (value: unknown): boolean =>
  typeof value === "string"
    ? value.isWellFormed()
    : typeof value !== "object" || value === null ||
      Object.entries(value).every(([key, item]) =>
        key.isWellFormed() && wellFormed(item)
      );

const quoteArb = fc.oneof(
  fc.constantFrom(
    "",
    "Hello.",
    "hello",
    "Hi!",
    "H",
    ".",
    "Why?",
    "\uFEFFHello.",
    "Émile.",
    "A\u0000.",
    "Ends with space. ",
  ),
  fc.string({ maxLength: 30 }),
);

/** Who acts: one of the known names (by index), or a credential that never worked. */
const whoArb = fc.oneof(
  fc.nat({ max: knownNames.length - 1 }),
  fc.constant(-1),
);

type Action =
  | { kind: "register"; name: string }
  | { kind: "list"; who: number }
  | { kind: "unregister"; who: number }
  | { kind: "post"; who: number; body: string }
  | { kind: "read" }
  | { kind: "getQuote" }
  | { kind: "setQuote"; text: string };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    arbitrary: nameArb.map((name) => ({ kind: "register" as const, name })),
    weight: 4,
  },
  whoArb.map((who) => ({ kind: "list" as const, who })),
  whoArb.map((who) => ({ kind: "unregister" as const, who })),
  {
    arbitrary: fc.tuple(whoArb, bodyArb).map(([who, body]) => ({
      kind: "post" as const,
      who,
      body,
    })),
    weight: 4,
  },
  fc.constant({ kind: "read" as const }),
  fc.constant({ kind: "getQuote" as const }),
  quoteArb.map((text) => ({ kind: "setQuote" as const, text })),
);

// ---- the model ----

interface Expected {
  status: number;
  json: unknown;
}

const entry = (location: string, name: string, description: string) => ({
  location,
  name,
  description,
});
const envelope = (...errors: ReturnType<typeof entry>[]) => ({
  status: "error",
  errors,
});
const UNAUTHORIZED = {
  status: 401,
  json: { status: 401, message: "Unauthorized" },
};

/** What the contract says, step by step; the tokens are the ones the service handed out. */
class Model {
  users = new Map<string, string>();
  order: string[] = [];
  messages: unknown[] = [];
  quote = "Not set, yet !";
  /** The credential each known name was last given, valid or not. */
  credentials = new Map<string, string>();

  constructor(readonly history: number) {}

  /** A credential the service handed out (still valid or not), chosen by `who`; a made-up one when `who` is negative or none was handed out. */
  credential(who: number): string {
    // A negative `who`, or none handed out, finds no index: the made-up one.
    return [...this.credentials.values()][who % this.credentials.size] ??
      "nobody-0000000000000000000000000000000000000000";
  }

  authenticated(who: number): string | null {
    const credential = this.credential(who);
    const dash = credential.indexOf("-");
    const name = credential.slice(0, dash);
    return this.users.get(name) === credential.slice(dash + 1) ? name : null;
  }

  /** Whether the contract refuses `name` (in NFC); the wording is the service's. */
  nameRefused(name: string): boolean {
    return name === "" || name.includes("-") ||
      /[\p{Cc}\u2028\u2029]/u.test(name) ||
      /[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}]/u.test(name) ||
      /\p{Noncharacter_Code_Point}/u.test(name) || /^\s|\s$/.test(name) ||
      [...name].length > 64;
  }

  expect(action: Action): Expected | "name-refused" | "registered" {
    switch (action.kind) {
      case "register": {
        const name = action.name.normalize("NFC");
        if (this.nameRefused(name)) return "name-refused";
        // One name, one look (UTS #39 skeletons, Unicode's own data).
        const look = lookOf(name);
        if ([...this.users.keys()].some((n) => lookOf(n) === look)) {
          return {
            status: 400,
            json: envelope(entry("url", "name", "This user exists!")),
          };
        }
        return "registered";
      }
      case "list":
        return this.authenticated(action.who) === null
          ? UNAUTHORIZED
          : { status: 200, json: { users: this.order } };
      case "unregister": {
        const name = this.authenticated(action.who);
        if (name === null) return UNAUTHORIZED;
        this.users.delete(name);
        this.order = this.order.filter((n) => n !== name);
        return { status: 200, json: { Goodbye: name } };
      }
      case "post": {
        const name = this.authenticated(action.who);
        if (name === null) return UNAUTHORIZED;
        let parsed: unknown;
        try {
          parsed = JSON.parse(action.body);
          // A lone surrogate is no text UTF-8 can hold (I-JSON).
          if (!wellFormed(parsed)) throw new SyntaxError("lone surrogate");
        } catch {
          return {
            status: 400,
            json: envelope(entry("body", "message", "Not valid JSON")),
          };
        }
        if (
          typeof parsed !== "object" || parsed === null ||
          Array.isArray(parsed) || !Object.hasOwn(parsed, "text")
        ) {
          return {
            status: 400,
            json: envelope(entry("body", "text", "Missing text")),
          };
        }
        const message = parsed as Record<string, unknown>;
        if (typeof message.text !== "string") {
          return {
            status: 400,
            json: envelope(entry("body", "text", "text must be a string")),
          };
        }
        if (!Object.hasOwn(message, "color")) message.color = "black";
        else if (message.color !== "red" && message.color !== "black") {
          return {
            status: 400,
            json: envelope(
              entry("body", "color", "only red and black supported"),
            ),
          };
        }
        message.user = name;
        this.messages = [message, ...this.messages].slice(0, this.history);
        return { status: 200, json: { status: "added" } };
      }
      case "read":
        return { status: 200, json: this.messages.slice(0, 5) };
      case "getQuote":
        return { status: 200, json: this.quote };
      case "setQuote": {
        const errors = [];
        if (!/^[A-Z]/.test(action.text)) {
          errors.push(
            entry("body", "quote", "Does not start with a majuscule"),
          );
        }
        if (!/[.?!]$/.test(action.text)) {
          errors.push(entry("body", "quote", "Does not end properly"));
        }
        if (errors.length > 0) {
          return { status: 400, json: envelope(...errors) };
        }
        this.quote = action.text;
        return { status: 200, json: null };
      }
    }
  }

  /** Records a registration the service accepted, with the token it gave. */
  registered(name: string, token: string): void {
    this.users.set(name, token.slice(name.length + 1));
    this.order.push(name);
    this.credentials.set(name, token);
  }
}

function perform(
  handler: (req: Request) => Response | Promise<Response>,
  model: Model,
  action: Action,
): Promise<Answer> {
  switch (action.kind) {
    case "register":
      return call(handler, "POST", "/users", { body: action.name });
    case "list":
      return call(handler, "GET", "/users", {
        token: model.credential(action.who),
      });
    case "unregister":
      return call(handler, "DELETE", "/users", {
        token: model.credential(action.who),
      });
    case "post":
      return call(handler, "POST", "/", {
        token: model.credential(action.who),
        body: action.body,
      });
    case "read":
      return call(handler, "GET", "/");
    case "getQuote":
      return call(handler, "GET", "/quote");
    case "setQuote":
      return call(handler, "POST", "/quote", { body: action.text });
  }
}

/** Runs `actions` against a fresh handler on `store` and the model, failing at the first difference. */
async function agree(store: Store, actions: Action[]): Promise<void> {
  const handler = createHandler({ store });
  const model = new Model(100);
  for (const [step, action] of actions.entries()) {
    const expected = model.expect(action);
    const answer = await perform(handler, model, action);
    const where = `step ${step}: ${JSON.stringify(action)}`;
    if (expected === "registered") {
      // Names are registered and answered in NFC.
      const name = (action as { name: string }).name.normalize("NFC");
      assert.equal(answer.status, 200, `${where}: ${answer.text}`);
      assert.ok(answer.json.token.startsWith(`${name}-`), where);
      assert.match(answer.json.token.slice(name.length + 1), /^[0-9a-f]{40}$/);
      model.registered(name, answer.json.token);
    } else if (expected === "name-refused") {
      assert.equal(answer.status, 400, `${where}: ${answer.text}`);
      assert.equal(answer.json.errors.length, 1, where);
      assert.equal(answer.json.errors[0].location, "body", where);
      assert.equal(answer.json.errors[0].name, "name", where);
    } else {
      assert.equal(answer.status, expected.status, `${where}: ${answer.text}`);
      assert.deepEqual(answer.json, expected.json, where);
    }
  }
}

/** Clears a store between runs: the model starts empty each time. */
type StoreFactory = () => Promise<Store>;

function sequential(runs: number) {
  return async (store: Store, fresh: StoreFactory) => {
    let first = true;
    await fc.assert(
      fc.asyncProperty(
        fc.array(actionArb, { minLength: 1, maxLength: 40, size: "max" }),
        async (actions) => {
          const target = first ? store : await fresh();
          first = false;
          try {
            await agree(target, actions);
          } finally {
            if (target !== store) await target.close();
          }
        },
      ),
      { seed: SEED, numRuns: runs },
    );
  };
}

storeTest(
  "random sequences of every call agree with the model of the contract",
  async (store, backend) => {
    await sequential(backend.name === "memory" ? 300 : 60)(
      store,
      () => backend.create(),
    );
  },
);

storeTest(
  "concurrent calls: one registration per name, removals and posts as answered, nothing refused is stored",
  async (_store, backend) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.constantFrom(...knownNames.slice(0, 3)).map((name) => ({
              kind: "register" as const,
              name,
            })),
            fc.nat({ max: 2 }).map((who) => ({
              kind: "unregister" as const,
              who,
            })),
            fc.tuple(fc.nat({ max: 2 }), fc.boolean()).map(([who, valid]) => ({
              kind: "post" as const,
              who,
              valid,
            })),
          ),
          { minLength: 2, maxLength: 20 },
        ),
        async (actions) => {
          const store = await backend.create();
          try {
            const handler = createHandler({ store });
            // Each known name starts registered, so removals and posts can succeed.
            const tokens = new Map<string, string>();
            for (const name of knownNames.slice(0, 3)) {
              tokens.set(
                name,
                (await call(handler, "POST", "/users", { body: name })).json
                  .token,
              );
            }
            const nameOf = (who: number) => {
              const name = knownNames[who];
              assert.ok(name !== undefined, `no known name ${who}`);
              return name;
            };
            const answers = await Promise.all(actions.map((action, i) => {
              if (action.kind === "register") {
                return call(handler, "POST", "/users", { body: action.name });
              }
              const token = tokens.get(nameOf(action.who));
              assert.ok(
                token !== undefined,
                "each known name starts registered",
              );
              if (action.kind === "unregister") {
                return call(handler, "DELETE", "/users", { token });
              }
              return call(handler, "POST", "/", {
                token,
                body: action.valid ? JSON.stringify({ text: `m${i}` }) : "{",
              });
            }));
            const registeredNow = new Set<string>();
            const leftNow = new Set<string>();
            const posted: string[] = [];
            for (const [i, action] of actions.entries()) {
              const answer = answers[i];
              assert.ok(answer, `no answer to action ${i}`);
              if (action.kind === "register") {
                if (answer.status === 200) {
                  assert.ok(
                    !registeredNow.has(action.name),
                    `${action.name} registered twice at once`,
                  );
                  registeredNow.add(action.name);
                } else assert.equal(answer.status, 400);
              } else if (action.kind === "unregister") {
                if (answer.status === 200) {
                  const name = nameOf(action.who);
                  assert.ok(!leftNow.has(name), `${name} removed twice`);
                  leftNow.add(name);
                } else assert.equal(answer.status, 401);
              } else if (answer.status === 200) {
                assert.ok(action.valid);
                posted.push(`m${i}`);
              } else assert.ok([400, 401].includes(answer.status));
            }
            // A name re-registers only after its first holder left.
            for (const name of registeredNow) assert.ok(leftNow.has(name));
            const expectedUsers = knownNames.slice(0, 3).filter((name) =>
              !leftNow.has(name) || registeredNow.has(name)
            );
            const someone = [...tokens.entries()].find(([name]) =>
              !leftNow.has(name)
            );
            if (someone) {
              const list = await call(handler, "GET", "/users", {
                token: someone[1],
              });
              assert.deepEqual(
                new Set(list.json.users),
                new Set(expectedUsers),
              );
            }
            const stored = (await call(handler, "GET", "/")).json.map((
              m: { text: string },
            ) => m.text);
            if (posted.length <= 5) {
              assert.deepEqual(new Set(stored), new Set(posted));
            }
            for (const text of stored) assert.ok(posted.includes(text));
            assert.equal(stored.length, Math.min(5, posted.length));
          } finally {
            await store.close();
          }
        },
      ),
      { seed: SEED, numRuns: backend.name === "memory" ? 200 : 40 },
    );
  },
);
