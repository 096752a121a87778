-- Pushes the record on; `change` holds the first `count` names and drops the rest, `set` (after
-- losing track) holds exactly those, `retire` drops every hold and the record. `gone`: the record
-- was gone (swept, or Redis emptied), so only the names entered here are held.
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
