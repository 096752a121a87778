/**
 * Every Lua script, declared once with the names of its keys and arguments (docs/redis.md#the-scripts).
 * @module
 */

import clock from "./lua/clock.lua" with { type: "text" };
import notices from "./lua/notices.lua" with { type: "text" };
import settled from "./lua/settled.lua" with { type: "text" };
import allowance from "./lua/allowance.lua" with { type: "text" };
import held from "./lua/held.lua" with { type: "text" };
import unregister from "./lua/unregister.lua" with { type: "text" };
import register from "./lua/register.lua" with { type: "text" };
import remove from "./lua/remove.lua" with { type: "text" };
import addMessage from "./lua/add_message.lua" with { type: "text" };
import setQuote from "./lua/set_quote.lua" with { type: "text" };
import recent from "./lua/recent.lua" with { type: "text" };
import older from "./lua/older.lua" with { type: "text" };
import raiseSequence from "./lua/raise_sequence.lua" with { type: "text" };
import check from "./lua/check.lua" with { type: "text" };
import presence from "./lua/presence.lua" with { type: "text" };
import presenceBeat from "./lua/presence_beat.lua" with { type: "text" };
import onlineNames from "./lua/online_names.lua" with { type: "text" };
import touchUsers from "./lua/touch_users.lua" with { type: "text" };
import forgetIdle from "./lua/forget_idle.lua" with { type: "text" };
import usersToConvert from "./lua/users_to_convert.lua" with { type: "text" };
import convertUser from "./lua/convert_user.lua" with { type: "text" };
import authFailure from "./lua/auth_failure.lua" with { type: "text" };
import authBucket from "./lua/auth_bucket.lua" with { type: "text" };
import authCheck from "./lua/auth_check.lua" with { type: "text" };

/** What a write answers when its fence had passed: it did nothing, and no attempt of it ever will. */
export const LATE = "late";

/** What a write answers when its client's allowance is spent: this, then the milliseconds to wait. */
export const LIMITED = "limited:";

/** A script whose source binds one Lua local per name; `rest` args follow from `ARGV[<rest>From]`. */
export interface Script<K extends string = string, A extends string = string> {
  readonly keys: readonly K[];
  readonly args: readonly A[];
  readonly rest?: string;
  readonly source: string;
}

interface Declaration<K extends string, A extends string>
  extends Omit<Script<K, A>, "source"> {
  /** The `.lua` texts, libraries first, the script's own body last. */
  readonly lua: readonly string[];
}

function script<const K extends string, const A extends string>(
  { lua, ...declared }: Declaration<K, A>,
): Script<K, A> {
  const locals = [
    ...declared.keys.map((key, i) => `local ${key} = KEYS[${i + 1}]`),
    ...declared.args.map((arg, i) => `local ${arg} = ARGV[${i + 1}]`),
    ...(declared.rest === undefined
      ? []
      : [`local ${declared.rest}From = ${declared.args.length + 1}`]),
  ];
  return { ...declared, source: [...locals, ...lua].join("\n") };
}

/** The arguments every settled write takes before its own, after its `records` key. */
const SETTLED_ARGS = ["writeNumber", "fence", "expiry"] as const;
export type SettledArg = typeof SETTLED_ARGS[number];

/** A settled write as `name` and `nameLimited`, which also spends the client's allowance. */
function write<
  N extends string,
  const K extends string,
  const A extends string,
>(name: N, declared: Declaration<K, A>) {
  const keys = ["records", ...declared.keys] as const;
  const args = [...SETTLED_ARGS, ...declared.args] as const;
  const [body, ...libraries] = [...declared.lua].reverse();
  const before = [clock, notices, ...libraries.reverse(), settled];
  return {
    [name]: script({ keys, args, lua: [...before, body!] }),
    [`${name}Limited`]: script({
      keys: [...keys, "bucket"] as const,
      args: [...args, "period", "burst"] as const,
      lua: [...before, allowance, body!],
    }),
  } as
    & Record<N, Script<K | "records", A | SettledArg>>
    & Record<
      `${N}Limited`,
      Script<K | "records" | "bucket", A | SettledArg | "period" | "burst">
    >;
}

export const SCRIPTS = {
  ...write("register", {
    keys: ["users", "order", "userSequence", "channel", "touched", "looks"],
    args: ["name", "token", "maxUsers", "skeleton"],
    lua: [register],
  }),
  ...write("remove", {
    keys: ["users", "order", "channel", "touched", "held", "looks"],
    args: ["name", "token"],
    lua: [held, unregister, remove],
  }),
  ...write("addMessage", {
    keys: ["messages", "sequence", "channel"],
    args: ["message", "history", "floor"],
    lua: [addMessage],
  }),
  ...write("setQuote", {
    keys: ["quoteKey", "channel"],
    args: ["quote"],
    lua: [setQuote],
  }),
  recent: script({
    keys: ["messages", "sequence"],
    args: ["afterId", "limit"],
    lua: [recent],
  }),
  older: script({
    keys: ["messages"],
    args: ["before", "limit"],
    lua: [older],
  }),
  raiseSequence: script({
    keys: ["sequence"],
    args: ["floor"],
    lua: [raiseSequence],
  }),
  check: script({ keys: ["generation", "sequence"], args: [], lua: [check] }),
  presence: script({
    keys: ["processes", "held", "touched", "users", "channel"],
    args: ["pid", "lifetime", "mode", "count"],
    rest: "names",
    lua: [clock, notices, held, presence],
  }),
  presenceBeat: script({
    keys: ["processes", "held", "touched", "channel"],
    args: ["pid", "lifetime", "limit"],
    lua: [clock, notices, held, presenceBeat],
  }),
  onlineNames: script({
    keys: ["held"],
    args: [],
    lua: [clock, notices, held, onlineNames],
  }),
  touchUsers: script({
    keys: ["touched", "users"],
    args: [],
    rest: "names",
    lua: [clock, touchUsers],
  }),
  forgetIdle: script({
    keys: ["users", "order", "touched", "held", "channel", "looks"],
    args: ["idleMs", "limit"],
    lua: [clock, notices, held, unregister, forgetIdle],
  }),
  usersToConvert: script({
    keys: ["users", "looks"],
    args: ["cursor", "count"],
    lua: [usersToConvert],
  }),
  authFailure: script({
    keys: ["bucket", "channel"],
    args: ["client", "period", "burst"],
    lua: [clock, notices, authBucket, authFailure],
  }),
  authCheck: script({
    keys: ["bucket", "channel", "users"],
    args: ["client", "period", "burst", "name", "digest"],
    lua: [clock, notices, authBucket, authCheck],
  }),
  convertUser: script({
    keys: ["users", "looks"],
    args: ["name", "stored", "digest", "skeleton"],
    lua: [convertUser],
  }),
} as const;

export type ScriptName = keyof typeof SCRIPTS;

/** The settled writes: each has a rate-limited twin, `<name>Limited`. */
export type WriteName = "register" | "remove" | "addMessage" | "setQuote";

export type KeysOf<N extends ScriptName> = typeof SCRIPTS[N] extends
  Script<infer K, string> ? K : never;

export type ArgsOf<N extends ScriptName> = typeof SCRIPTS[N] extends
  Script<string, infer A> ? A : never;

/** A call of script `name`: its KEYS and ARGV in declared order, then `rest`. */
export function callOf<N extends ScriptName>(
  name: N,
  keys: Record<KeysOf<N>, string>,
  args: Record<ArgsOf<N>, string>,
  rest: readonly string[] = [],
): [N, string[], string[]] {
  const declared = SCRIPTS[name] as Script<KeysOf<N>, ArgsOf<N>>;
  return [
    name,
    declared.keys.map((key) => keys[key]),
    [...declared.args.map((arg) => args[arg]), ...rest],
  ];
}
