/**
 * The Lua scripts that make each write one atomic Redis step: the write,
 * its change notice on the shared channel (`change_notice.ts`) and the
 * record of its result happen together or not at all.
 *
 * Every write is settled (`settled_writes.ts`): it carries its process's
 * records and its number there, and a fence, the moment after which no
 * attempt of it may apply. A script first looks its number up and, when a
 * result is recorded, answers it without writing again; so an attempt sent
 * again after a lost reply never writes twice. With a rate limit it spends
 * the client's allowance in the same step. The other scripts (two reads,
 * and raising the message sequence, which may run any number of times)
 * are not fenced.
 *
 * The connection runs them by SHA1 (EVALSHA, falling back to EVAL when Redis
 * has not seen them) rather than sending their text every time, which is
 * faster (see bench/results/profiles/redis_writes.md).
 * @module
 */

import { NOTICE_LUA } from "./change_notice.ts";
import { PRESENCE_SCRIPTS, UNREGISTER_LUA } from "./presence_scripts.ts";

/** What a write answers when its fence had passed: it did nothing, and no attempt of it ever will. */
export const LATE = "late";

/** What a write answers when its client's allowance is spent: this, then the milliseconds to wait. */
export const LIMITED = "limited:";

/**
 * Every write script starts with this. KEYS[1] is the hash of the writing
 * process's records for the current second, ARGV[1] the write's number,
 * ARGV[2] its fence in Redis's clock (ms), and ARGV[3] how long the hash is
 * to live, or 0 once a write has set that. A recorded result is answered
 * as it is; else an attempt after the fence does nothing. `done` records
 * the result with the write, in the same step, and answers it.
 */
const SETTLED = `
local recorded = redis.call('HGET', KEYS[1], ARGV[1])
if recorded then return recorded end
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if now > tonumber(ARGV[2]) then return '${LATE}' end
local function done(result)
  redis.call('HSET', KEYS[1], ARGV[1], result)
  if ARGV[3] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
  return result
end`;

/**
 * The rate limit, folded into a write's own script (and so its round trip):
 * after the fence and before the write, it spends one write of the client's
 * bucket, KEYS[#KEYS], under ARGV[#ARGV - 1] (the period, in ms) and
 * ARGV[#ARGV] (the burst). The bucket is GCRA's one number, the moment it
 * is full again, in Redis's clock; it expires then, so idle clients cost
 * Redis nothing. A refusal is recorded like any result.
 */
const ALLOWANCE = `
local period = tonumber(ARGV[#ARGV - 1])
local full = math.max(tonumber(redis.call('GET', KEYS[#KEYS]) or '0'), now)
local wait = full - now - (tonumber(ARGV[#ARGV]) - 1) * period
if wait > 0 then return done('${LIMITED}' .. string.format('%d', wait)) end
redis.call('SET', KEYS[#KEYS], string.format('%d', full + period), 'PX', full + period - now)`;

/** A script and how many of its arguments are keys. */
export interface Script {
  source: string;
  keys: number;
}

/**
 * A settled write as two scripts: `name`, and `nameLimited`, which takes the
 * client's bucket as one more key and the rate as two more arguments.
 * `keys` counts the body's own keys, which come after the records (KEYS[2]
 * on); the body's arguments come after the number, the fence and the
 * expiry (ARGV[4] on). The body ends with `return done(<result text>)`.
 */
function write<N extends string>(
  name: N,
  keys: number,
  body: string,
): Record<N | `${N}Limited`, Script> {
  return {
    [name]: { keys: keys + 1, source: SETTLED + body },
    [`${name}Limited`]: {
      keys: keys + 2,
      source: SETTLED + ALLOWANCE + body,
    },
  } as Record<N | `${N}Limited`, Script>;
}

/**
 * Every script, by name. Registration order is a sorted set scored by a
 * counter, so a name that leaves and comes back goes to the end, as with
 * the memory store. The presence scripts are in `presence_scripts.ts`.
 */
export const SCRIPTS = {
  /**
   * KEYS users, order, sequence, channel, touched; ARGV name, token,
   * maxUsers → `registered`, `exists` or `full`. Registering is activity:
   * a user's idle time starts then.
   */
  ...write(
    "register",
    5,
    `
local users, order, sequence, channel, touched = KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local name, token, maxUsers = ARGV[4], ARGV[5], tonumber(ARGV[6])
if redis.call('HLEN', users) >= maxUsers then
  if redis.call('HEXISTS', users, name) == 1 then return done('exists') end
  return done('full')
end
if redis.call('HSETNX', users, name, token) == 0 then return done('exists') end
redis.call('ZADD', order, redis.call('INCR', sequence), name)
redis.call('ZADD', touched, now, name)
redis.call('PUBLISH', channel, ${NOTICE_LUA.registered()})
return done('registered')`,
  ),
  /**
   * KEYS users, order, channel, touched, held; ARGV name, token →
   * `removed`, or `kept` when the token was not the name's. The step is
   * the one forgetting takes too (`UNREGISTER_LUA`).
   */
  ...write(
    "remove",
    5,
    `${UNREGISTER_LUA}
local users, order, channel, touched, held = KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local name, token = ARGV[4], ARGV[5]
if redis.call('HGET', users, name) ~= token then return done('kept') end
unregister(users, order, touched, held, channel, name)
return done('removed')`,
  ),
  /**
   * KEYS messages, sequence, channel; ARGV message, history, floor → the
   * message's id. The list holds `<id> <json>`, newest first; the notice
   * carries the same, so every process can pass it on to its readers
   * without asking, in id order (scripts run one at a time).
   *
   * The floor is the highest id the writing process has seen: a sequence
   * that is gone or behind it (Redis emptied under the service) goes on
   * above it, so an id once given is not given again while any process
   * remembers it, and a reader's old `Last-Event-ID` cannot hide new
   * messages.
   */
  ...write(
    "addMessage",
    3,
    `
local messages, sequence, channel = KEYS[2], KEYS[3], KEYS[4]
local message, history, floor = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
local id = redis.call('INCR', sequence)
if id <= floor then
  id = floor + 1
  redis.call('SET', sequence, id)
end
id = string.format('%d', id)
redis.call('LPUSH', messages, id .. ' ' .. message)
redis.call('LTRIM', messages, 0, history - 1)
redis.call('PUBLISH', channel, ${NOTICE_LUA.message("id", "message")})
return done(id)`,
  ),
  /** KEYS quote, channel; ARGV quote → `set`. The notice carries the quote. */
  ...write(
    "setQuote",
    2,
    `
local quote, channel = KEYS[2], KEYS[3]
redis.call('SET', quote, ARGV[4])
redis.call('PUBLISH', channel, ${NOTICE_LUA.quote("ARGV[4]")})
return done('set')`,
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
  /**
   * KEYS sequence; ARGV floor: raises the message sequence to the floor
   * when it is below it (gone, or Redis emptied), never lowers it. Every
   * process that notices does this, so ids go on above what any running
   * process has seen even when the next message comes from one that saw
   * none (started since).
   */
  raiseSequence: {
    keys: 1,
    source: `
if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
end`,
  },
  /**
   * KEYS generation, sequence → Redis's clock (`TIME`: seconds,
   * microseconds), the generation key or nil, the sequence or nil: what the
   * store checks every second, in one round trip.
   */
  check: {
    keys: 2,
    source: `
local now = redis.call('TIME')
return {now[1], now[2], redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2])}`,
  },
  ...PRESENCE_SCRIPTS,
} satisfies Record<string, Script>;

/** The name of one of {@linkcode SCRIPTS}. */
export type ScriptName = keyof typeof SCRIPTS;

/** The settled writes: each has a rate-limited twin, `<name>Limited`. */
export type WriteName = "register" | "remove" | "addMessage" | "setQuote";
