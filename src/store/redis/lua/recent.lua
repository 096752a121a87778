-- Reads only as many entries as there are ids above afterId, so a reader
-- that is up to date costs one GET, whatever the history holds.
local newest = tonumber(redis.call('GET', sequence) or '0')
local after = tonumber(afterId)
local count = math.min(newest - after, tonumber(limit))
if count <= 0 then return {newest, 0} end
local oldest = redis.call('LINDEX', messages, -1)
local reply = {newest, oldest and tonumber(string.match(oldest, '^%d+')) or 0}
for _, entry in ipairs(redis.call('LRANGE', messages, 0, count - 1)) do
  if tonumber(string.match(entry, '^%d+')) > after then
    reply[#reply + 1] = entry
  end
end
return reply
