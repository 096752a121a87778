if redis.call('HGET', users, name) ~= token then return done('kept') end
unregister(users, order, touched, held, looks, channel, name)
return done('removed')
