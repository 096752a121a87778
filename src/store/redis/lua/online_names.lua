local names = {}
for _, entry in ipairs(redis.call('ZRANGEBYLEX', held, '[n:', '(n;')) do
  local name = string.sub(entry, 3, string.find(entry, SEP, 3, true) - 1)
  if names[#names] ~= name then names[#names + 1] = name end
end
return names
