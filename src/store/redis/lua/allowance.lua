-- The rate limit, spent in the write's own step (GCRA: when the bucket is full again, expiring
-- then); a refusal is recorded like any result.
local periodMs = tonumber(period)
local full = math.max(tonumber(redis.call('GET', bucket) or '0'), now)
local wait = full - now - (tonumber(burst) - 1) * periodMs
if wait > 0 then return done('limited:' .. string.format('%d', wait)) end
redis.call('SET', bucket, string.format('%d', full + periodMs), 'PX', full + periodMs - now)
