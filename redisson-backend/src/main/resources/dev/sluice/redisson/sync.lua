-- Adds the counts one instance made locally to the window counters of every tier of one key,
-- and takes off what it gave back of counts it had added before, atomically, and answers what
-- all instances counted: the sync of LocalSyncRateLimitStore. The counters are those of
-- decide.lua, so instances syncing and instances deciding here share one limit. A sync sent again
-- (its answer was lost) is recognised by its instance and sequence, and adds and takes off nothing
-- the second time, even when it arrives after a later sync of the instance. A sync never moves
-- the key's time: counts of a window later than the key's current one (the instance's clock ran
-- ahead of the key's) were made now, and count in the current window.
--
-- KEYS[i]      tier i's state, a hash, as for decide.lua; it also keeps, per instance, the
--              highest sequence of the instance's syncs added to it
-- ARGV[1]      now in epoch ms, or '' to use the server's TIME
-- ARGV[2]      the instance's id
-- ARGV[3]      the sync's sequence, increasing with every new sync of the instance
-- ARGV[4 + 7 * (i - 1) ...]  tier i: algorithm (fw or sw), window ms, the start of the window
--              the counts are of, the count in that window, the count in the window before, and
--              what was given back of the counts of that window and of the window before
-- Returns {now ms, then for each tier: its window start, count, previous window's count}.

local max = math.max
local server_now = server_clock()
local client_clock = ARGV[1] ~= ''
local now = server_now
if client_clock then now = tonumber(ARGV[1]) end
local field = 'q' .. ARGV[2]
local sequence = tonumber(ARGV[3])
local reply = { now }

for i = 1, #KEYS do
  local a = 4 + 7 * (i - 1)
  local sliding, window, start = ARGV[a] == 'sw', tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local state = redis.call('HMGET', KEYS[i], 'v', field)
  local latest, block, s, n, p, e, since = now, 0, false, 0, 0, 0, math.huge
  if state[1] then
    latest, block, s, n, p, e = struct.unpack('<dddddd', state[1])
    if #state[1] >= 56 then since = struct.unpack('<d', state[1], 49) end
  end
  -- The key's time never runs backwards.
  local at = max(now, latest)
  local current = at - at % window
  if not s then
    s = current
  elseif current > s then
    if sliding and current - window == s then p = n else p = 0 end
    s, n = current, 0
  end
  -- As decide.lua: back to full, the tier counts nothing admitted before.
  if n == 0 and p == 0 then since = at end
  local added_up_to = tonumber(state[2]) or 0
  if sequence > added_up_to then
    local added, added_before = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
    local back, back_before = tonumber(ARGV[a + 5]), tonumber(ARGV[a + 6])
    if start == s then
      n = max(0, n + added - back)
      if sliding then p = max(0, p + added_before - back_before) end
    elseif start > s then
      n = max(0, n + added + added_before - back - back_before)
    elseif sliding and start == s - window then
      p = max(0, p + added - back)
    end
  end
  -- As decide.lua: a fixed window matters until its end, a sliding one until the end of the
  -- next; the expiry only ever moves later.
  local expires = expires_at(at, s + (sliding and 2 or 1) * window - at, server_now, client_clock)
  local later = expires > e
  if later then e = expires end
  -- The highest sequence: a copy of an older sync arriving late must not let a later one count again.
  redis.call('HSET', KEYS[i], 'v', struct.pack('<ddddddd', at, block, s, n, p, e, since), field,
             max(sequence, added_up_to))
  if later then redis.call('PEXPIREAT', KEYS[i], expires) end
  reply[#reply + 1] = s
  reply[#reply + 1] = n
  reply[#reply + 1] = p
end
return reply
