-- One page and one entry more, found in O(1) while ids are consecutive, else by
-- bisection (docs/redis.md, History pages).
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
