-- By DELETE /users or by forgetting: the user, its look, order, idle time and every hold on it
-- go together.
local function unregister(users, order, touched, held, looks, channel, name)
  redis.call('HDEL', users, name)
  local look = redis.call('HGET', looks, 'n:' .. name)
  if look then redis.call('HDEL', looks, 'n:' .. name, 's:' .. look) end
  redis.call('ZREM', order, name)
  redis.call('ZREM', touched, name)
  for _, entry in ipairs(holders(held, name, -1)) do
    redis.call('ZREM', held, entry,
      'p:' .. string.sub(entry, #name + 4) .. SEP .. name)
  end
  redis.call('PUBLISH', channel, notice_removed(name))
end
