/**
 * The Lua scripts that make each write one atomic Redis step: the write and
 * its change notice on the shared channel (`change_notice.ts`) happen
 * together or not at all.
 * Every write is fenced in time (see {@linkcode LATE}) and, with a rate
 * limit, spends the client's allowance in the same step; the one read
 * script is not.
 * The connection runs them by SHA1 (EVALSHA, falling back to EVAL when Redis
 * has not seen them) rather than sending their text every time: measured
 * side by side, registration went from 16,285 to 17,799 requests/s.
 * @module
 */

import { NOTICE_LUA } from "./change_notice.ts";

/**
 * Every write script starts with this: its last argument is the moment (in
 * Redis's clock, milliseconds) after which its request has been answered
 * 503, and a write that runs later does nothing. A write answered 503
 * because Redis was too slow therefore never takes effect when Redis
 * catches up.
 */
const FENCE = `
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if now > tonumber(ARGV[#ARGV]) then
  return 'late'
end`;

/** What a write answers when its client's allowance is spent: this, then the milliseconds to wait. */
export const LIMITED = "limited:";

/**
 * The rate limit, folded into a write's own script (and so its round trip):
 * after the fence and before the write, it spends one write of the client's
 * bucket, KEYS[#KEYS], under ARGV[#ARGV - 2] (the period, in ms) and
 * ARGV[#ARGV - 1] (the burst). The bucket is GCRA's one number, the moment
 * it is full again, in Redis's clock; it expires then, so idle clients cost
 * Redis nothing.
 */
const ALLOWANCE = `
local period = tonumber(ARGV[#ARGV - 2])
local full = math.max(tonumber(redis.call('GET', KEYS[#KEYS]) or '0'), now)
local wait = full - now - (tonumber(ARGV[#ARGV - 1]) - 1) * period
if wait > 0 then return '${LIMITED}' .. wait end
redis.call('SET', KEYS[#KEYS], string.format('%d', full + period), 'PX', full + period - now)`;

/** What a fenced write answers when it ran too late and did nothing. */
export const LATE = "late";

/** A script and how many of its arguments are keys. */
export interface Script {
  source: string;
  keys: number;
}

/**
 * A fenced write as two scripts: `name`, and `nameLimited`, which takes the
 * client's bucket as one more key and the rate before the fence.
 */
function write<N extends string>(
  name: N,
  keys: number,
  body: string,
): Record<N | `${N}Limited`, Script> {
  return {
    [name]: { keys, source: FENCE + body },
    [`${name}Limited`]: { keys: keys + 1, source: FENCE + ALLOWANCE + body },
  } as Record<N | `${N}Limited`, Script>;
}

/**
 * Every script, by name. Registration order is a sorted set scored by a
 * counter, so a name that leaves and comes back goes to the end, as with
 * the memory store.
 */
export const SCRIPTS = {
  /** KEYS users, order, sequence, channel; ARGV name, token, maxUsers, fence → `registered`, `exists`, `full` or `late`. */
  ...write(
    "register",
    4,
    `
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 'exists' end
  return 'full'
end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 'exists' end
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[1])
redis.call('PUBLISH', KEYS[4], ${NOTICE_LUA.registered()})
return 'registered'`,
  ),
  /** KEYS users, order, channel; ARGV name, token, fence → `removed`, `kept` when the token was not the name's, or `late`. */
  ...write(
    "remove",
    3,
    `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 'kept' end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('PUBLISH', KEYS[3], ${NOTICE_LUA.removed("ARGV[1]")})
return 'removed'`,
  ),
  /**
   * KEYS messages, sequence, channel; ARGV message, history, fence → the
   * message's id, or `late`. The list holds `<id> <json>`, newest first; the
   * notice carries the same, so every process can pass it on to its readers
   * without asking, in id order (scripts run one at a time).
   */
  ...write(
    "addMessage",
    3,
    `
local id = string.format('%d', redis.call('INCR', KEYS[2]))
redis.call('LPUSH', KEYS[1], id .. ' ' .. ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
redis.call('PUBLISH', KEYS[3], ${NOTICE_LUA.message("id", "ARGV[1]")})
return id`,
  ),
  /** KEYS quote, channel; ARGV quote, fence → `set` or `late`. The notice carries the quote. */
  ...write(
    "setQuote",
    2,
    `
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PUBLISH', KEYS[2], ${NOTICE_LUA.quote("ARGV[1]")})
return 'set'`,
  ),
  /**
   * KEYS messages, sequence; ARGV afterId, limit → the newest id ever
   * given, the id of the oldest message retained (0 when none is, or when
   * nothing above afterId is asked for), then the retained `<id> <json>`
   * entries above afterId, newest first, at most `limit` of them. It reads
   * only as many entries as there are ids above afterId, so a reader that
   * is up to date costs one GET, whatever the history holds.
   */
  recent: {
    keys: 2,
    source: `
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
local after = tonumber(ARGV[1])
local count = math.min(newest - after, tonumber(ARGV[2]))
if count <= 0 then return {newest, 0} end
local oldest = redis.call('LINDEX', KEYS[1], -1)
local reply = {newest, oldest and tonumber(string.match(oldest, '^%d+')) or 0}
for _, entry in ipairs(redis.call('LRANGE', KEYS[1], 0, count - 1)) do
  if tonumber(string.match(entry, '^%d+')) > after then
    reply[#reply + 1] = entry
  end
end
return reply`,
  },
} satisfies Record<string, Script>;

/** The name of one of {@linkcode SCRIPTS}. */
export type ScriptName = keyof typeof SCRIPTS;

/** The writes: each has a rate-limited twin, `<name>Limited`. */
export type WriteName = Exclude<ScriptName, `${string}Limited` | "recent">;
