-- One HSCAN step: the next cursor, then name, stored value of each user an earlier version
-- left (its token in clear, 40 digits, or no look).
local scan = redis.call('HSCAN', users, cursor, 'COUNT', count)
local found = {scan[1]}
local entries = scan[2]
for i = 1, #entries, 2 do
  local name, stored = entries[i], entries[i + 1]
  if #stored == 40 or redis.call('HEXISTS', looks, 'n:' .. name) == 0 then
    found[#found + 1] = name
    found[#found + 1] = stored
  end
end
return found
