-- Registering is activity: the user's idle time starts now.
if redis.call('HEXISTS', users, name) == 1 then return done('exists') end
if redis.call('HLEN', users) >= tonumber(maxUsers) then return done('full') end
-- One name, one look: a name whose skeleton a registered one has is taken.
if redis.call('HEXISTS', looks, 's:' .. skeleton) == 1 then return done('exists') end
redis.call('HSET', users, name, token)
redis.call('HSET', looks, 's:' .. skeleton, name, 'n:' .. name, skeleton)
redis.call('ZADD', order, redis.call('INCR', userSequence), name)
redis.call('ZADD', touched, now, name)
redis.call('PUBLISH', channel, notice_registered())
return done('registered')
