-- Registering is activity: the user's idle time starts now.
if redis.call('HLEN', users) >= tonumber(maxUsers) then
  if redis.call('HEXISTS', users, name) == 1 then return done('exists') end
  return done('full')
end
if redis.call('HSETNX', users, name, token) == 0 then return done('exists') end
redis.call('ZADD', order, redis.call('INCR', sequence), name)
redis.call('ZADD', touched, now, name)
redis.call('PUBLISH', channel, notice_registered())
return done('registered')
