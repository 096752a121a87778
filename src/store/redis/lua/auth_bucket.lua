-- A client's failure bucket, counted the way allowance.lua spends a write
-- (GCRA: the moment the bucket is full again, by Redis's clock).
local function bucket_wait(now)
  local full = math.max(tonumber(redis.call('GET', bucket) or '0'), now)
  return full - now - (tonumber(burst) - 1) * tonumber(period), full
end

-- Counts one failure unless none is left (then every process hears the wait): {1 or 0, the wait}.
local function count_failure(now)
  local wait, full = bucket_wait(now)
  local counted = 0
  if wait <= 0 then
    full = full + tonumber(period)
    redis.call('SET', bucket, string.format('%d', full), 'PX', full - now)
    wait = wait + tonumber(period)
    counted = 1
  end
  if wait > 0 then redis.call('PUBLISH', channel, notice_limited(client, wait)) end
  return {counted, math.max(wait, 0)}
end
