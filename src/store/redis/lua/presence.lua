-- Pushes the process's record on, then by mode:
-- `change`: the first `count` names are held, the rest no longer are;
-- `set`: exactly the `count` names are held, every other hold of the
--   process dropped (after it lost track: a lost reply, its record swept);
-- `retire`: every hold of the process dropped, and its record.
-- Answers `gone` when the record was gone (swept, or Redis emptied: every
-- hold it had was dropped, and only the names entered here are held now).
local now = clock()
local kept = redis.call('ZSCORE', processes, pid)
local entering = {}
redis.call('ZADD', processes, now + tonumber(lifetime), pid)
for i = namesFrom, namesFrom + tonumber(count) - 1 do
  entering[ARGV[i]] = true
  enter(users, held, channel, pid, ARGV[i])
end
if mode == 'change' then
  for i = namesFrom + tonumber(count), #ARGV do
    leave(held, touched, channel, now, pid, ARGV[i])
  end
else
  for _, name in ipairs(heldBy(held, pid, -1)) do
    if not entering[name] then leave(held, touched, channel, now, pid, name) end
  end
end
if mode == 'retire' then redis.call('ZREM', processes, pid) end
return kept and 'ok' or 'gone'
