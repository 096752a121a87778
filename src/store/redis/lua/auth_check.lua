-- The try of a client with recent failures, judged in one step: refused
-- while its bucket is empty; else its credential is checked here and a
-- wrong one counted, so tries at several processes at once can neither
-- slip past the count nor spend it when right. Answers {-1, wait} when
-- refused, {1, 0} when the digest is the user's, else what count_failure
-- answers with 0 first: {0, wait}.
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
