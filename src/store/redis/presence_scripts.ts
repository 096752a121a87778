/**
 * The Lua scripts behind presence and forgetting, each one atomic Redis
 * step, so any number of processes may run them at once.
 *
 * Keys:
 * - **processes**, a sorted set: each process's id, scored with the moment
 *   (Redis's clock, ms) its record expires. A process pushes it on at
 *   every beat; once it has passed, any process drops the dead one's
 *   names.
 * - **held**, a sorted set, every score 0, read by range of text: for each
 *   process P holding an authenticated stream of user N, `n:N␁P` (who
 *   holds N) and `p:P␁N` (what P holds). ␁ is the byte 1: names hold no
 *   control character, so `n:N␁` begins the entries of N and no other
 *   name's.
 * - **touched**, a sorted set: each registered user, scored with the last
 *   moment it was active (registered, made an authenticated request, went
 *   offline, or was found online by a sweep).
 *
 * A user is online while some entry `n:N␁…` exists. The scripts that add
 * or drop entries publish `online:N` when the first appears and `offline:N`
 * when the last goes (`change_notice.ts`).
 * @module
 */

import { NOTICE_LUA } from "./change_notice.ts";

/** `clock()`: Redis's clock, in milliseconds. */
const CLOCK = `
local function clock()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end`;

/**
 * Lua helpers over the held entries. `holders` lists the entries of a
 * name; `enter` and `leave` add and drop one process's hold on a name,
 * publishing the change when it is the first or last; `heldBy` lists the
 * names a process holds.
 */
const HELD = `${CLOCK}
local SEP, AFTER = string.char(1), string.char(2)
local function holders(held, name, limit)
  return redis.call('ZRANGEBYLEX', held, '[n:' .. name .. SEP,
    '(n:' .. name .. AFTER, 'LIMIT', 0, limit)
end
local function enter(users, held, channel, pid, name)
  if redis.call('HEXISTS', users, name) == 0 then return end
  local first = #holders(held, name, 1) == 0
  if redis.call('ZADD', held, 0, 'n:' .. name .. SEP .. pid) == 0 then return end
  redis.call('ZADD', held, 0, 'p:' .. pid .. SEP .. name)
  if first then redis.call('PUBLISH', channel, ${NOTICE_LUA.online("name")}) end
end
local function leave(held, touched, channel, now, pid, name)
  if redis.call('ZREM', held, 'n:' .. name .. SEP .. pid) == 0 then return end
  redis.call('ZREM', held, 'p:' .. pid .. SEP .. name)
  if #holders(held, name, 1) == 0 then
    redis.call('ZADD', touched, 'XX', now, name)
    redis.call('PUBLISH', channel, ${NOTICE_LUA.offline("name")})
  end
end
local function heldBy(held, pid, limit)
  local names = {}
  for i, entry in ipairs(redis.call('ZRANGEBYLEX', held, '[p:' .. pid .. SEP,
      '(p:' .. pid .. AFTER, 'LIMIT', 0, limit)) do
    names[i] = string.sub(entry, #pid + 4)
  end
  return names
end`;

/**
 * The step that unregisters a user, shared by `DELETE /users` (the
 * `remove` write) and forgetting (`forgetIdle`), so both do exactly the
 * same: the user, its place in the order, its activity and every hold on
 * it go, and every process hears `removed:N`. It defines
 * `unregister(users, order, touched, held, channel, name)`.
 */
export const UNREGISTER_LUA = `${HELD}
local function unregister(users, order, touched, held, channel, name)
  redis.call('HDEL', users, name)
  redis.call('ZREM', order, name)
  redis.call('ZREM', touched, name)
  for _, entry in ipairs(holders(held, name, -1)) do
    redis.call('ZREM', held, entry,
      'p:' .. string.sub(entry, #name + 4) .. SEP .. name)
  end
  redis.call('PUBLISH', channel, ${NOTICE_LUA.removed("name")})
end`;

/** The presence scripts, by name (spread into `SCRIPTS`, which checks their shape). */
export const PRESENCE_SCRIPTS = {
  /**
   * KEYS processes, held, touched, users, channel; ARGV process id, record
   * lifetime (ms), mode, count, then names → `ok`. Pushes the process's
   * record on, then by mode:
   * - `change`: the first `count` names are held (those registered), the
   *   rest no longer are;
   * - `set`: exactly the `count` names are held, every other hold of the
   *   process is dropped (after the process lost track: a lost reply, or
   *   its record swept);
   * - `retire`: every hold of the process is dropped, and its record.
   */
  presence: {
    keys: 5,
    source: `${HELD}
local processes, held, touched, users, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local pid, mode, count = ARGV[1], ARGV[3], tonumber(ARGV[4])
local now = clock()
redis.call('ZADD', processes, now + tonumber(ARGV[2]), pid)
local entering = {}
for i = 5, 4 + count do
  entering[ARGV[i]] = true
  enter(users, held, channel, pid, ARGV[i])
end
if mode == 'change' then
  for i = 5 + count, #ARGV do leave(held, touched, channel, now, pid, ARGV[i]) end
else
  for _, name in ipairs(heldBy(held, pid, -1)) do
    if not entering[name] then leave(held, touched, channel, now, pid, name) end
  end
end
if mode == 'retire' then redis.call('ZREM', processes, pid) end
return 'ok'`,
  },
  /**
   * KEYS processes, held, touched, channel; ARGV process id, record
   * lifetime (ms), limit → `{kept, more}`. Pushes the process's record on
   * (`kept` is 0 when it was gone: swept, or Redis emptied, so the
   * process must say again what it holds), then drops the holds of dead
   * processes, at most `limit` of them (`more` is 1 when some are left).
   */
  presenceBeat: {
    keys: 4,
    source: `${HELD}
local processes, held, touched, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local pid, limit = ARGV[1], tonumber(ARGV[3])
local now = clock()
local kept = redis.call('ZSCORE', processes, pid) and 1 or 0
redis.call('ZADD', processes, now + tonumber(ARGV[2]), pid)
for _, dead in ipairs(redis.call('ZRANGEBYSCORE', processes, '-inf', now, 'LIMIT', 0, 16)) do
  local names = heldBy(held, dead, limit)
  for _, name in ipairs(names) do leave(held, touched, channel, now, dead, name) end
  limit = limit - #names
  if limit <= 0 then return {kept, 1} end
  redis.call('ZREM', processes, dead)
end
return {kept, 0}`,
  },
  /** KEYS held → the names held by any process, once each, in byte order. */
  onlineNames: {
    keys: 1,
    source: `${HELD}
local names = {}
for _, entry in ipairs(redis.call('ZRANGEBYLEX', KEYS[1], '[n:', '(n;')) do
  local name = string.sub(entry, 3, string.find(entry, SEP, 3, true) - 1)
  if names[#names] ~= name then names[#names + 1] = name end
end
return names`,
  },
  /**
   * KEYS touched, users; ARGV names: each one registered was active now
   * (one registered by an earlier version, with no entry yet, gets one).
   */
  touchUsers: {
    keys: 2,
    source: `${CLOCK}
local now = clock()
for i = 1, #ARGV do
  if redis.call('HEXISTS', KEYS[2], ARGV[i]) == 1 then
    redis.call('ZADD', KEYS[1], 'GT', now, ARGV[i])
  end
end`,
  },
  /**
   * KEYS users, order, touched, held, channel; ARGV idle time (ms), limit →
   * how many were forgotten. Each user last active before the idle time
   * is unregistered unless it is online (then it is active now), at most
   * `limit` looked at. One step: a user who came back (online, or a touch
   * that landed) is not removed.
   */
  forgetIdle: {
    keys: 5,
    source: `${UNREGISTER_LUA}
local users, order, touched, held, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now = clock()
local forgotten = 0
for _, name in ipairs(redis.call('ZRANGEBYSCORE', touched, '-inf',
    now - tonumber(ARGV[1]), 'LIMIT', 0, tonumber(ARGV[2]))) do
  if #holders(held, name, 1) > 0 then
    redis.call('ZADD', touched, now, name)
  elseif redis.call('HEXISTS', users, name) == 1 then
    unregister(users, order, touched, held, channel, name)
    forgotten = forgotten + 1
  else
    redis.call('ZREM', touched, name)
  end
end
return forgotten`,
  },
} as const;
