-- Unregisters users idle too long unless online (then active now), at most `limit` looked at;
-- one step, so a user who came back is not removed.
local now = clock()
local forgotten = 0
for _, name in ipairs(redis.call('ZRANGEBYSCORE', touched, '-inf',
    now - tonumber(idleMs), 'LIMIT', 0, tonumber(limit))) do
  if #holders(held, name, 1) > 0 then
    redis.call('ZADD', touched, now, name)
  elseif redis.call('HEXISTS', users, name) == 1 then
    unregister(users, order, touched, held, looks, channel, name)
    forgotten = forgotten + 1
  else
    redis.call('ZREM', touched, name)
  end
end
return forgotten
