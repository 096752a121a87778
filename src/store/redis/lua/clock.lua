-- Redis's own clock in milliseconds: every process shares it.
local function clock()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
