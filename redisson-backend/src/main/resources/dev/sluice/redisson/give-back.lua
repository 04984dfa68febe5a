-- Gives back the permits of a call decide.lua admitted, as if it had not been made: each tier's
-- count is what it would be without the call, in the window the call was admitted in while that
-- window still counts. Serves two callers: a limiter giving back a call whose outcome does not
-- count (RateLimitStore.giveBack), which knows how long ago the call was admitted; and the store
-- taking back a call whose caller never got the answer (it gave up waiting), which knows the time
-- decide.lua decided it at and the call's id. Counted rejections and blocks are left as they
-- are: they only restrict.
-- Or recounts the call as if admitted now (RateLimitStore.recount): each sliding log moves the
-- entry it would give back to the key's time; other tiers hold no call times and stay as they are.
--
-- ARGV[1]      the call's id, which names its SLIDING_LOG and CONCURRENCY entries, or '' when it
--              is not known: then a concurrency tier gives nothing back, and its entry goes when its
--              lease ends
-- ARGV[2]      figures, little-endian doubles (struct '<ddddd'), then each tier as decide.lua
--              reads it ('<c2dddd'):
--                now in epoch ms, or NaN to use the server's TIME
--                cost
--                the time the call was admitted at, in the time decide.lua decided with; or NaN
--                when only how long ago is known
--                how long ago the call was admitted, in ms (not negative), when that time is NaN
--                1 to recount the call, 0 to give it back
-- KEYS         as for decide.lua: each tier's state, then the log of each SLIDING_LOG tier
-- Returns 1.
--
-- A tier's hash keeps, after the figures decide.lua reads, the time its state was last found
-- back to full (since): calls admitted before it are no longer counted there. A hash that is
-- gone, or that does not say (written by an earlier version), gives nothing back. A window
-- takes the cost off the window the call was counted in; a token bucket gets back what of the
-- cost it has not refilled since the call, never more than the call took, never above capacity.
-- A sliding log's entries are the truth, whatever its hash says: the call's own entry, when its
-- id is known; otherwise one entry of the same cost admitted no later than the call, the newest
-- such among the log's newest entries that still count, found within a bounded number of them.
-- A recount gives that entry, the same member, the key's time as its score, unless it has it:
-- the key's time, as decide.lua takes it, is the latest of now and of the times the tiers' hashes
-- keep, and becomes the log's hash's, so that later calls are never decided before the entry.
-- The log and its hash then live until the entry leaves, as decide.lua keeps them (the log as
-- long as its hash, which a pause may have kept longer than the log's entries); the hash's
-- counts stay, as the log holds as many entries and permits as before.
-- Every loop is bounded: by the tiers, and by SEARCH entries.

local SEARCH, PAGE = 1024, 128
local max = math.max

local id, figures = ARGV[1], ARGV[2]
local now, cost, admitted, ago, recount = struct.unpack('<ddddd', figures)
local server_now = server_clock()
local client_clock = now == now
if not client_clock then now = server_now end
-- Known by how long ago, the call was admitted that long before each tier's key time: a call
-- decided just now may have been decided at that time, ahead of the clock.
local by_ago = admitted ~= admitted
local count = (#figures - 40) / 34
local logs = 0

-- The permits of a sliding log's entry, named by its call's id and its cost.
local function permits(member)
  return tonumber(string.match(member, ':(%d+)$')) or 0
end

-- The time the call was admitted at, in the time of a key now at key_now.
local function admitted_at(key_now)
  if by_ago then return key_now - ago end
  return admitted
end

-- The newest entry of this cost admitted no later than the call (at), among the log's SEARCH
-- newest entries, stopping at the first that no longer counts, and its time; or nil.
local function newest_of_cost(log, oldest, at)
  for rank = 0, SEARCH - 1, PAGE do
    local entries = redis.call('ZREVRANGE', log, rank, rank + PAGE - 1, 'WITHSCORES')
    for i = 1, #entries, 2 do
      local score = tonumber(entries[i + 1])
      if score <= oldest then return nil end
      if score <= at and permits(entries[i]) == cost then return entries[i], score end
    end
    if #entries < 2 * PAGE then return nil end
  end
  return nil
end

-- Moves the call's entry of each sliding log to the key's time.
local function recount_logs()
  local key_now, states = now, {}
  for i = 1, count do
    local state = redis.call('HGET', KEYS[i], 'v')
    states[i] = state
    if state then
      local latest = struct.unpack('<d', state)
      if latest > key_now then key_now = latest end
    end
  end
  for i = 1, count do
    local algorithm, _, window = struct.unpack('<c2dd', figures, 41 + 34 * (i - 1))
    if algorithm == 'cc' then
      logs = logs + 1
    elseif algorithm == 'sl' then
      logs = logs + 1
      local log, state = KEYS[count + logs], states[i]
      local member, score = newest_of_cost(log, key_now - window, admitted_at(key_now))
      if member and score < key_now then
        redis.call('ZADD', log, 'XX', key_now, member)
        local expires = expires_at(key_now, window, server_now, client_clock)
        if state then
          local _, block, s, n, p, e = struct.unpack('<dddddd', state)
          local since = math.huge
          if #state >= 56 then since = struct.unpack('<d', state, 49) end
          if expires > e then
            e = expires
            redis.call('PEXPIREAT', KEYS[i], e)
          end
          -- As long as its hash: a pause may have kept the hash longer than the log's entries.
          redis.call('PEXPIREAT', log, e)
          redis.call('HSET', KEYS[i], 'v', struct.pack('<ddddddd', key_now, block, s, n, p, e, since))
        else
          -- The log is the truth: decide.lua counts it again, and writes a hash for it.
          redis.call('PEXPIREAT', log, expires)
        end
      end
    end
  end
end

if recount == 1 then
  recount_logs()
  return 1
end

for i = 1, count do
  local algorithm, limit, window = struct.unpack('<c2dd', figures, 41 + 34 * (i - 1))
  local state = redis.call('HGET', KEYS[i], 'v')
  local latest, block, s, n, p, e, since
  if state then
    latest, block, s, n, p, e = struct.unpack('<dddddd', state)
    if #state >= 56 then since = struct.unpack('<d', state, 49) end
  end
  local changed = false
  local key_now = now
  if state and latest > now then key_now = latest end
  local at = admitted_at(key_now)
  if algorithm == 'sl' or algorithm == 'cc' then
    logs = logs + 1
    local log, member = KEYS[count + logs], nil
    if id ~= '' then
      member = string.format('%s:%d', id, cost)
    elseif algorithm == 'sl' then
      member = newest_of_cost(log, key_now - window, at)
    end
    if member and redis.call('ZREM', log, member) == 1 and state then
      -- n permits in p entries.
      n, p, changed = max(0, n - cost), max(0, p - 1), true
    end
  elseif state and since then
    local start = at - at % window
    if since > at then
      -- The tier was back to full since the call: it no longer counts it.
    elseif algorithm == 'fw' then
      -- The call's window counts until its end.
      if s == start and key_now - start < window then n, changed = max(0, n - cost), true end
    elseif algorithm == 'sw' then
      -- The call's window counts until the end of the next one, as the current or the previous window.
      if key_now - start < 2 * window then
        if s == start then
          n, changed = max(0, n - cost), true
        elseif s == start + window then
          p, changed = max(0, p - cost), true
        end
      end
    else
      -- Refilled up to the key's time, which a clock set back leaves ahead.
      local refilled = max(0, key_now - at) * limit
      if refilled < cost * window then n, changed = max(0, n - (cost * window - refilled)), true end
    end
  end
  if changed then
    redis.call('HSET', KEYS[i], 'v', struct.pack('<ddddddd', latest, block, s, n, p, e, since or math.huge))
  end
end
return 1
