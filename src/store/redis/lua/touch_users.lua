-- Each registered name was active now (one from an earlier version, with no entry, gets one).
local now = clock()
for i = namesFrom, #ARGV do
  if redis.call('HEXISTS', users, ARGV[i]) == 1 then
    redis.call('ZADD', touched, 'GT', now, ARGV[i])
  end
end
