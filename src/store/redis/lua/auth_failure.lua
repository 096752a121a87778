-- One try counted, the way allowance.lua spends a write (GCRA, the moment
-- the bucket is full again): a failed authentication, or the try of a
-- client with recent failures before its credential is checked. Answers
-- {1 when counted, 0 when none was left; the wait now}. When none is left,
-- every process hears how long the client must wait and refuses it from
-- memory.
local periodMs = tonumber(period)
local spare = (tonumber(burst) - 1) * periodMs
local now = clock()
local full = math.max(tonumber(redis.call('GET', bucket) or '0'), now)
local counted = 0
if full - now - spare <= 0 then
  full = full + periodMs
  redis.call('SET', bucket, string.format('%d', full), 'PX', full - now)
  counted = 1
end
local wait = full - now - spare
if wait > 0 then redis.call('PUBLISH', channel, notice_limited(client, wait)) end
return {counted, math.max(wait, 0)}
