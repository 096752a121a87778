-- Gives back one try auth_failure.lua counted before a check that then
-- authenticated: only failures count. The bucket never grows past full.
local now = clock()
local full = tonumber(redis.call('GET', bucket) or '0') - tonumber(period)
if full <= now then
  redis.call('DEL', bucket)
else
  redis.call('SET', bucket, string.format('%d', full), 'PX', full - now)
end
return 1
