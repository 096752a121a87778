-- Converts one user left by an earlier version, unless it changed since it
-- was read: its token kept as a digest, its look recorded when free.
if redis.call('HGET', users, name) ~= stored then return 0 end
redis.call('HSET', users, name, digest)
if redis.call('HEXISTS', looks, 'n:' .. name) == 0
    and redis.call('HEXISTS', looks, 's:' .. skeleton) == 0 then
  redis.call('HSET', looks, 's:' .. skeleton, name, 'n:' .. name, skeleton)
end
return 1
