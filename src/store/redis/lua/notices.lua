-- The change notices every process hears (decoded by change_notice.ts). An id is formatted
-- with %d: Lua's own `..` writes large numbers with an exponent.
local function notice_message(id, json) return 'message:' .. id .. ' ' .. json end
local function notice_quote(quote) return 'quote:' .. quote end
local function notice_registered() return 'users' end
local function notice_removed(name) return 'removed:' .. name end
local function notice_online(name) return 'online:' .. name end
local function notice_offline(name) return 'offline:' .. name end
local function notice_limited(client, wait) return 'limited:' .. string.format('%d', wait) .. ' ' .. client end
