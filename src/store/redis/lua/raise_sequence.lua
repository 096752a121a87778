-- Raises, never lowers: ids go on above what any running process has seen.
if tonumber(redis.call('GET', sequence) or '0') < tonumber(floor) then
  redis.call('SET', sequence, floor)
end
