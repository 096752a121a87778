-- The list holds ids newest first, each at least one below the one before,
-- so the first entry below `before` is at most `head - before + 1` from the
-- head: exactly there while ids are consecutive (two LINDEX to confirm),
-- found by bisection when the sequence once jumped. Answers one entry more
-- than the limit when there is one, so the reader knows an older page exists.
local length = redis.call('LLEN', messages)
if length == 0 then return {} end
local function idAt(index)
  return tonumber(string.match(redis.call('LINDEX', messages, index), '^%d+'))
end
local below = tonumber(before)
local start = 0
if idAt(0) >= below then
  if idAt(-1) >= below then return {} end
  -- hi always holds an id below `before`, lo one at or above it.
  local hi = math.min(idAt(0) - below + 1, length - 1)
  local lo = hi - 1
  if idAt(lo) < below then
    lo = 0
    while hi - lo > 1 do
      local mid = math.floor((lo + hi) / 2)
      if idAt(mid) < below then hi = mid else lo = mid end
    end
  end
  start = hi
end
return redis.call('LRANGE', messages, start, start + tonumber(limit))
