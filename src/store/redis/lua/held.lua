-- Who holds a user online: both directions of each (process, name) pair, so
-- either question is one range read (docs/redis.md, Presence keys).
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
  if first then redis.call('PUBLISH', channel, notice_online(name)) end
end
local function leave(held, touched, channel, now, pid, name)
  if redis.call('ZREM', held, 'n:' .. name .. SEP .. pid) == 0 then return end
  redis.call('ZREM', held, 'p:' .. pid .. SEP .. name)
  if #holders(held, name, 1) == 0 then
    redis.call('ZADD', touched, 'XX', now, name)
    redis.call('PUBLISH', channel, notice_offline(name))
  end
end
local function heldBy(held, pid, limit)
  local names = {}
  for i, entry in ipairs(redis.call('ZRANGEBYLEX', held, '[p:' .. pid .. SEP,
      '(p:' .. pid .. AFTER, 'LIMIT', 0, limit)) do
    names[i] = string.sub(entry, #pid + 4)
  end
  return names
end
