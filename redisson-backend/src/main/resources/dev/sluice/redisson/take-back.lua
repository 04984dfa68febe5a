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

for i = 1, count do
  local a = 6 + 5 * (i - 1)
  local algorithm, limit, window = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local removed = false
  if algorithm == 'sl' then
    logs = logs + 1
    removed = redis.call('ZREM', KEYS[count + logs], string.format('%s:%d', ARGV[3], cost)) == 1
  end
  local state = redis.call('HGET', KEYS[i], 'v')
  if state then
    local latest, block, s, n, p, e = struct.unpack('<dddddd', state)
    local start = now - now % window
    if algorithm == 'fw' then
      if s == start then n = n - cost end
    elseif algorithm == 'sw' then
      if s == start then n = n - cost elseif s == start + window then p = p - cost end
    elseif algorithm == 'sl' then
      if removed then n = n - cost end
    else
      n = n - math.max(0, cost * window - (latest - now) * limit)
    end
    redis.call('HSET', KEYS[i], 'v', struct.pack('<dddddd', latest, block, s, math.max(0, n), math.max(0, p), e))
  end
end
return 1
