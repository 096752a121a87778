-- Every write starts here (settled_writes.ts): a result recorded for its number is answered
-- again, an attempt after its fence does nothing; `done` records the result with the write.
local recorded = redis.call('HGET', records, writeNumber)
if recorded then return recorded end
local now = clock()
if now > tonumber(fence) then return 'late' end
local function done(result)
  redis.call('HSET', records, writeNumber, result)
  if expiry ~= '0' then redis.call('PEXPIRE', records, expiry) end
  return result
end
