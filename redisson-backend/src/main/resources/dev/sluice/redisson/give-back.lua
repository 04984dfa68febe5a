-- Takes back a call that decide.lua admitted but whose caller never got the answer (it gave up
-- waiting, and its limiter's failure policy answered instead): each tier's count is what it would
-- be without the call. Counted rejections and blocks are left as they are: they only restrict.
--
-- KEYS, ARGV   as for decide.lua, but that the first figure is the time decide.lua decided the
--              call at
-- A tier whose state has moved past the call's window, or expired, keeps it: the call no longer
-- counts there anyway. A token bucket gets back only what of the call's tokens has not been
-- refilled since: never more than the call took.

local figures = ARGV[2]
local now, cost = struct.unpack('<dd', figures)
local count = (#figures - 40) / 34
local logs = 0

for i = 1, count do
  local algorithm, limit, window = struct.unpack('<c2dd', figures, 41 + 34 * (i - 1))
  local removed = false
  if algorithm == 'sl' then
    logs = logs + 1
    removed = redis.call('ZREM', KEYS[count + logs], string.format('%s:%d', ARGV[1], cost)) == 1
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
      -- n permits in p entries.
      if removed then n, p = n - cost, p - 1 end
    else
      n = n - math.max(0, cost * window - (latest - now) * limit)
    end
    redis.call('HSET', KEYS[i], 'v', struct.pack('<dddddd', latest, block, s, math.max(0, n), math.max(0, p), e))
  end
end
return 1
