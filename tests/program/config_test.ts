import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type Config,
  configFromEnv,
  OPTIONS,
  parseFlags,
  UsageError,
} from "../../src/program/config.ts";
import type { Option } from "../../src/program/options.ts";

const SEED = 20261124;

const env = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("the store is memory unless --store or LMS_STORE names Redis", () => {
  assert.equal(parseFlags([], env({})).store, "memory");
  assert.equal(
    parseFlags([], env({ LMS_STORE: "redis://h:1/2" })).store,
    "redis://h:1/2",
  );
  assert.equal(
    parseFlags(
      ["--store=redis://a:1/0"],
      env({ LMS_STORE: "redis://b:2/0" }),
    ).store,
    "redis://a:1/0",
    "the flag wins over the variable",
  );
  assert.equal(parseFlags([], env({})).redisPrefix, "lms:");
  assert.equal(parseFlags(["--redis-prefix=x:"], env({})).redisPrefix, "x:");
});

for (
  const [args, vars] of [
    [["--store=postgres://h/db"], {}],
    [["--store="], {}],
    [[], { LMS_STORE: "redis:" }],
  ] as [string[], Record<string, string>][]
) {
  Deno.test(`a store that is not memory or redis:// is a usage error: ${JSON.stringify([args, vars])}`, () => {
    assert.throws(
      () => parseFlags(args, env(vars)),
      (error) =>
        error instanceof UsageError &&
        /^(--store|LMS_STORE) must be memory, a redis:\/\/ URL, or redis\+sentinel:\/\//
          .test(
            error.message,
          ),
    );
  });
}

Deno.test("--store and LMS_STORE take a redis+sentinel:// URL", () => {
  const url = "redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/cache/1";
  assert.equal(parseFlags([`--store=${url}`], env({})).store, url);
  assert.equal(parseFlags([], env({ LMS_STORE: url })).store, url);
  assert.equal(configFromEnv(env({ LMS_STORE: url })).store, url);
});

Deno.test("a store refused is shown without its password", () => {
  for (
    const [given, shown] of [
      ["redis+sentinel://u:s3cret@h:1", "redis+sentinel://u:***@h:1"],
      ["redis+sentinel://:s3cret@h:99999/m", "redis+sentinel://:***@h:99999/m"],
      ["postgres://u:s3cret@h/db", "postgres://u:***@h/db"],
    ]
  ) {
    assert.throws(
      () => parseFlags([`--store=${given}`], env({})),
      (error) =>
        error instanceof UsageError && !error.message.includes("s3cret") &&
        error.message.endsWith(`(got ${JSON.stringify(shown)})`),
    );
  }
});

Deno.test("--redis-wait-replicas is 0 unless given, a whole number up to 100, LMS_REDIS_WAIT_REPLICAS under deno serve", () => {
  assert.equal(parseFlags([], env({})).redisWaitReplicas, 0);
  assert.equal(
    parseFlags(["--redis-wait-replicas=2"], env({})).redisWaitReplicas,
    2,
  );
  assert.equal(
    configFromEnv(env({ LMS_REDIS_WAIT_REPLICAS: "1" })).redisWaitReplicas,
    1,
  );
  for (const bad of ["-1", "101", "x", "1.5", ""]) {
    assert.throws(
      () => parseFlags([`--redis-wait-replicas=${bad}`], env({})),
      /^Error: --redis-wait-replicas must be a whole number from 0 to 100/,
    );
  }
});

Deno.test("--hostname takes any address but the empty one", () => {
  assert.equal(parseFlags([], env({})).hostname, "0.0.0.0");
  assert.equal(parseFlags(["--hostname=::1"], env({})).hostname, "::1");
  assert.throws(
    () => parseFlags(["--hostname="], env({})),
    /^Error: --hostname must not be empty/,
  );
});

Deno.test("LMS_* variables stand for the flags of the deno serve entry", () => {
  const config = configFromEnv(env({
    LMS_SERVICE: "quote",
    LMS_MAX_BODY_BYTES: "10",
    LMS_HISTORY: "7",
    LMS_MAX_USERS: "3",
    LMS_REDIS_PREFIX: "p:",
    LMS_QUIET: "1",
    LMS_STORE: "redis://h:1/0",
    PORT: "9",
  }));
  assert.deepEqual(
    {
      service: config.service,
      maxBodyBytes: config.maxBodyBytes,
      history: config.history,
      maxUsers: config.maxUsers,
      redisPrefix: config.redisPrefix,
      quiet: config.quiet,
      store: config.store,
      port: config.port,
    },
    {
      service: "quote",
      maxBodyBytes: 10,
      history: 7,
      maxUsers: 3,
      redisPrefix: "p:",
      quiet: true,
      store: "redis://h:1/0",
      port: 8000,
    },
    "deno serve owns the socket: PORT is not its",
  );
  assert.equal(configFromEnv(env({ LMS_QUIET: "0" })).quiet, false);
  assert.throws(() => configFromEnv(env({ LMS_QUIET: "yes" })), UsageError);
  assert.throws(
    () => configFromEnv(env({ LMS_HISTORY: "2" })),
    /^Error: LMS_HISTORY must be a whole number from 5/,
  );
  assert.equal(
    parseFlags([], env({ LMS_HISTORY: "7" })).history,
    100,
    "main.ts reads its flags, not the variables of deno serve",
  );
});

Deno.test("--cors-origin is repeatable, takes * or an origin, and LMS_CORS_ORIGIN lists them", () => {
  assert.deepEqual(parseFlags([], env({})).corsOrigins, []);
  assert.deepEqual(
    parseFlags([
      "--cors-origin=https://a.example",
      "--cors-origin=http://127.0.0.1:8080",
    ], env({})).corsOrigins,
    ["https://a.example", "http://127.0.0.1:8080"],
  );
  assert.deepEqual(parseFlags(["--cors-origin=*"], env({})).corsOrigins, [
    "*",
  ]);
  assert.deepEqual(
    configFromEnv(env({ LMS_CORS_ORIGIN: "https://a.example, http://b.test" }))
      .corsOrigins,
    ["https://a.example", "http://b.test"],
  );
});

for (
  const bad of [
    "https://a.example/",
    "https://a.example/path",
    "ftp://a.example",
    "a.example",
    "",
    "HTTPS://A.EXAMPLE",
  ]
) {
  Deno.test(`--cors-origin=${JSON.stringify(bad)} is a usage error naming the flag`, () => {
    assert.throws(
      () => parseFlags([`--cors-origin=${bad}`], env({})),
      (error) =>
        error instanceof UsageError &&
        /^--cors-origin must be/.test(error.message),
    );
  });
}

Deno.test("a bad LMS_* value is reported by the variable's name, not the flag's", () => {
  for (
    const [vars, name] of [
      [{ LMS_STORE: "bogus" }, "LMS_STORE"],
      [{ LMS_MAX_BODY_BYTES: "lots" }, "LMS_MAX_BODY_BYTES"],
      [{ LMS_SERVICE: "chat" }, "LMS_SERVICE"],
      [{ LMS_CORS_ORIGIN: "nowhere" }, "LMS_CORS_ORIGIN"],
    ] as [Record<string, string>, string][]
  ) {
    assert.throws(
      () => configFromEnv(env(vars)),
      (error) =>
        error instanceof UsageError && error.message.startsWith(`${name} `),
      JSON.stringify(vars),
    );
  }
  assert.throws(
    () => parseFlags([], env({ LMS_STORE: "bogus" })),
    (error) =>
      error instanceof UsageError && /^LMS_STORE must be/.test(error.message),
    "main.ts's fallback names the variable too",
  );
  assert.throws(
    () => parseFlags(["--store=bogus"], env({})),
    (error) =>
      error instanceof UsageError && /^--store must be/.test(error.message),
  );
});

Deno.test("--auth-failures=BURST/SECONDS is on by default at 100/0.1, 0 turns it off, LMS_AUTH_FAILURES says the same", () => {
  assert.deepEqual(parseFlags([], env({})).authFailures, {
    burst: 100,
    periodMs: 100,
  });
  assert.deepEqual(
    parseFlags(["--auth-failures=5/2.5"], env({})).authFailures,
    {
      burst: 5,
      periodMs: 2500,
    },
  );
  assert.equal(parseFlags(["--auth-failures=0"], env({})).authFailures, false);
  assert.equal(
    configFromEnv(env({ LMS_AUTH_FAILURES: "0" })).authFailures,
    false,
  );
  assert.deepEqual(
    configFromEnv(env({ LMS_AUTH_FAILURES: "20/1" })).authFailures,
    { burst: 20, periodMs: 1000 },
  );
  for (const bad of ["off", "00", "0/1", "5", "5/0", "-1/1", "1/1.2345"]) {
    assert.throws(
      () => parseFlags([`--auth-failures=${bad}`], env({})),
      /--auth-failures must be BURST\/SECONDS, such as 10\/6: BURST failures at once/,
      bad,
    );
  }
});

Deno.test("the operating flags: --rate-limit=BURST/SECONDS, --trust-proxy, --max-streams-per-client, --log-format, and their LMS_* variables", () => {
  const defaults = parseFlags([], env({}));
  assert.equal(defaults.rateLimit, undefined, "no limit unless asked");
  assert.equal(defaults.trustProxy, false);
  assert.equal(defaults.maxStreamsPerClient, 20);
  assert.equal(defaults.logFormat, "text");
  const flags = parseFlags([
    "--rate-limit=10/6",
    "--trust-proxy",
    "--max-streams-per-client=3",
    "--log-format=json",
  ], env({}));
  assert.deepEqual(flags.rateLimit, { burst: 10, periodMs: 6000 });
  assert.equal(flags.trustProxy, true);
  assert.equal(flags.maxStreamsPerClient, 3);
  assert.equal(flags.logFormat, "json");
  assert.deepEqual(
    parseFlags(["--rate-limit=1/0.25"], env({})).rateLimit,
    { burst: 1, periodMs: 250 },
  );
  assert.deepEqual(
    parseFlags(["--rate-limit=1000000000/0.001"], env({})).rateLimit,
    { burst: 1_000_000_000, periodMs: 1 },
  );
  assert.deepEqual(
    parseFlags(["--rate-limit=1000000/86400"], env({})).rateLimit,
    { burst: 1_000_000, periodMs: 86_400_000 },
  );
  const fromEnv = configFromEnv(env({
    LMS_RATE_LIMIT: "5/60",
    LMS_TRUST_PROXY: "1",
    LMS_MAX_STREAMS_PER_CLIENT: "4",
    LMS_LOG_FORMAT: "json",
  }));
  assert.deepEqual(
    [
      fromEnv.rateLimit,
      fromEnv.trustProxy,
      fromEnv.maxStreamsPerClient,
      fromEnv.logFormat,
    ],
    [{ burst: 5, periodMs: 60_000 }, true, 4, "json"],
  );
  for (
    const bad of [
      "10",
      "0/5",
      "5/0",
      "5/-1",
      "a/b",
      "5/1.2345",
      "5/90000",
      "1000000001/0.001",
      "1000000000/86400",
    ]
  ) {
    assert.throws(
      () => parseFlags([`--rate-limit=${bad}`], env({})),
      /--rate-limit must be BURST\/SECONDS/,
      bad,
    );
  }
  assert.throws(
    () => parseFlags(["--log-format=xml"], env({})),
    /--log-format must be text or json/,
  );
  assert.throws(
    () => configFromEnv(env({ LMS_RATE_LIMIT: "many" })),
    /^Error: LMS_RATE_LIMIT must be/,
  );
  assert.throws(
    () => configFromEnv(env({ LMS_TRUST_PROXY: "yes" })),
    /LMS_TRUST_PROXY must be 0 or 1/,
  );
});

// ---- every option, as a property ----

/** Texts a user might give: the options' own words, numbers, and any text. */
const rawArb = fc.oneof(
  fc.constantFrom(
    "",
    "0",
    "1",
    "5",
    "10",
    "65535",
    "65536",
    "1073741824",
    "all",
    "quote",
    "messaging",
    "text",
    "json",
    "memory",
    "redis://h:1/0",
    "rediss://x",
    "10/6",
    "1/0.001",
    "*",
    "https://a.example",
    "0.0.0.0",
    "lms:",
    "a\nb",
    '"',
  ),
  fc.integer({ min: -10, max: 2 ** 31 }).map(String),
  fc.string({ maxLength: 12 }),
);

type Outcome = { value: unknown } | { refused: string };

function outcome(read: () => Config, key: keyof Config): Outcome {
  try {
    return { value: read()[key] };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return { refused: error.message };
  }
}

/** The flags that say what `raw` says in the option's variable. */
function flagsFor(option: Option<unknown>, raw: string): string[] | undefined {
  if (option.kind === "switch") {
    return raw === "1" ? [`--${option.flag}`] : raw === "0" ? [] : undefined;
  }
  if (option.kind === "list") {
    return raw.split(/[\s,]+/).filter(Boolean).map((value) =>
      `--${option.flag}=${value}`
    );
  }
  return [`--${option.flag}=${raw}`];
}

for (
  const [key, option] of Object.entries(OPTIONS) as [
    keyof Config,
    Option<unknown>,
  ][]
) {
  const variable = option.variable;
  if (!variable) continue;
  Deno.test(`${variable.name} and --${option.flag} say the same, and a bad value is refused in one line naming where it came from`, () => {
    fc.assert(
      fc.property(rawArb, (raw) => {
        const vars = env({ [variable.name]: raw });
        const fromVariable = variable.serve
          ? outcome(() => configFromEnv(vars), key)
          : outcome(() => parseFlags([], vars), key);
        if (variable.fallback && variable.serve) {
          assert.deepEqual(
            outcome(() => parseFlags([], vars), key),
            fromVariable,
            "main.ts's fallback reads it as deno serve does",
          );
        }
        const flags = flagsFor(option, raw);
        const fromFlags = flags &&
          outcome(() => parseFlags(flags, env({})), key);
        if ("refused" in fromVariable) {
          assert.match(fromVariable.refused, new RegExp(`^${variable.name} `));
          assert.doesNotMatch(fromVariable.refused, /\n/);
          if (fromFlags && "refused" in fromFlags) {
            assert.equal(
              fromFlags.refused,
              fromVariable.refused.replace(variable.name, `--${option.flag}`),
            );
          } else {
            // A switch's variable takes 1 or 0 only, which no flag spells.
            assert.equal(fromFlags, undefined, JSON.stringify(raw));
          }
        } else {
          assert.deepEqual(fromFlags, fromVariable, JSON.stringify(raw));
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
}

Deno.test("without its flag or variable, every option has its default, which its parser accepts", () => {
  const defaults = parseFlags([], env({}));
  assert.deepEqual(configFromEnv(env({})), defaults);
  for (const [key, option] of Object.entries(OPTIONS)) {
    assert.deepEqual(option.read([]), defaults[key as keyof Config], key);
    if (
      option.kind === "value" && defaults[key as keyof Config] !== undefined
    ) {
      assert.deepEqual(
        parseFlags([`--${option.flag}=${option.shownDefault}`], env({}))[
          key as keyof Config
        ],
        defaults[key as keyof Config],
        `--${option.flag}=${option.shownDefault}`,
      );
    }
  }
});

Deno.test("a leading -- (npm's habit: deno task start -- --help) is passed over", () => {
  for (const args of [["--help"], ["--port=0", "--service=quote"], []]) {
    assert.deepEqual(
      parseFlags(["--", ...args], env({})),
      parseFlags(args, env({})),
    );
  }
});

Deno.test("whatever the arguments, main.ts starts or is refused with one line", () => {
  const flagArb = fc.oneof(
    fc.constantFrom(...Object.values(OPTIONS).map((o) => `--${o.flag}`)),
    fc.string({ maxLength: 8 }).map((name) => `--${name}`),
  );
  const argArb = fc.oneof(
    fc.tuple(flagArb, rawArb).map(([flag, raw]) => `${flag}=${raw}`),
    flagArb,
    rawArb,
  );
  fc.assert(
    fc.property(fc.array(argArb, { maxLength: 4 }), (args) => {
      const result = outcome(() => parseFlags(args, env({})), "port");
      if ("refused" in result) {
        assert.doesNotMatch(result.refused, /\n/, JSON.stringify(args));
      }
    }),
    { seed: SEED, numRuns: 500 },
  );
});
