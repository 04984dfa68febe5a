-- Takes back a call that decide.lua admitted but whose caller never got the answer (it gave up
-- waiting, and its limiter's failure policy answered instead): each tier's count is what it would
-- be without the call. Counted rejections and blocks are left as they are: they only restrict.
--
-- KEYS         as for decide.lua
-- ARGV[1]      the time decide.lua decided the call at
-- ARGV[2]      cost
-- ARGV[3]      the call's id
-- ARGV[6 + 5 * (i - 1) ...]  tier i, as for decide.lua
-- A tier whose state has moved past the call's window, or expired, keeps it: the call no longer
-- counts there anyway. A token bucket gets back only what of the call's tokens has not been
-- refilled since: never more than the call took.

local now = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local count = (#ARGV - 5) / 5
local logs = 0

local function give_back(key, field, amount)
  local value = tonumber(redis.call('HGET', key, field))
  if value then
    redis.call('HSET', key, field, math.max(0, value - amount))
  end
end

for i = 1, count do
  local a = 6 + 5 * (i - 1)
  local key, algorithm, limit, window = KEYS[i], ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local start = now - now % window
  if algorithm == 'fw' then
    if tonumber(redis.call('HGET', key, 's')) == start then give_back(key, 'n', cost) end
  elseif algorithm == 'sw' then
    local s = tonumber(redis.call('HGET', key, 's'))
    if s == start then
      give_back(key, 'n', cost)
    elseif s == start + window then
      give_back(key, 'p', cost)
    end
  elseif algorithm == 'sl' then
    logs = logs + 1
    if redis.call('ZREM', KEYS[count + logs], ARGV[3] .. ':' .. cost) == 1 then give_back(key, 'n', cost) end
  elseif algorithm == 'tb' then
    local refilled_since = (tonumber(redis.call('HGET', key, 't')) or now) - now
    give_back(key, 'n', math.max(0, cost * window - refilled_since * limit))
  end
end
return 1
