-- A try judged and counted in one step (docs/redis.md, Failed authentications):
-- {-1, wait} when refused, {1, 0} when the digest is the user's, else {0, wait}.
local now = clock()
local wait = bucket_wait(now)
if wait > 0 then return {-1, wait} end
local stored = redis.call('HGET', users, name)
-- Compared byte by byte throughout, whatever differs first.
if stored and #stored == #digest then
  local diff = 0
  for i = 1, #stored do
    diff = bit.bor(diff, bit.bxor(string.byte(stored, i), string.byte(digest, i)))
  end
  if diff == 0 then return {1, 0} end
end
return {0, count_failure(now)[2]}
