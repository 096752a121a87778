-- One failed authentication, counted the way allowance.lua spends a write
-- (GCRA, the moment the bucket is full again). When the client has none
-- left, every process hears how long it must wait, so each refuses it
-- from memory; a failure that arrives then is not counted again.
local periodMs = tonumber(period)
local spare = (tonumber(burst) - 1) * periodMs
local now = clock()
local full = math.max(tonumber(redis.call('GET', bucket) or '0'), now)
if full - now - spare <= 0 then
  full = full + periodMs
  redis.call('SET', bucket, string.format('%d', full), 'PX', full - now)
end
local wait = full - now - spare
if wait > 0 then redis.call('PUBLISH', channel, notice_limited(client, wait)) end
return math.max(wait, 0)
