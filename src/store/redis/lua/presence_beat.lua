-- Pushes the record on (`kept` 0: it was gone, so the process must say its holds again), then
-- drops dead processes' holds, at most `limit` (`more` 1: some are left).
local now = clock()
local left = tonumber(limit)
local kept = redis.call('ZSCORE', processes, pid) and 1 or 0
redis.call('ZADD', processes, now + tonumber(lifetime), pid)
for _, dead in ipairs(redis.call('ZRANGEBYSCORE', processes, '-inf', now, 'LIMIT', 0, 16)) do
  local names = heldBy(held, dead, left)
  for _, name in ipairs(names) do leave(held, touched, channel, now, dead, name) end
  left = left - #names
  if left <= 0 then return {kept, 1} end
  redis.call('ZREM', processes, dead)
end
return {kept, 0}
