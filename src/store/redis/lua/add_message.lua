-- A sequence gone or behind the writer's floor (Redis emptied under the
-- service) goes on above it, so an id once given is never given again.
local id = redis.call('INCR', sequence)
if id <= tonumber(floor) then
  id = tonumber(floor) + 1
  redis.call('SET', sequence, id)
end
id = string.format('%d', id)
redis.call('LPUSH', messages, id .. ' ' .. message)
redis.call('LTRIM', messages, 0, tonumber(history) - 1)
redis.call('PUBLISH', channel, notice_message(id, message))
return done(id)
