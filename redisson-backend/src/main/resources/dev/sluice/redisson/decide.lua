-- Decides one call for every tier of one key, atomically, and counts it if it fits, or, for a
-- caller that may wait, reserves it if it will fit in time.
-- The same rules as dev.sluice.InMemoryRateLimitStore (KeyState and TierState), in whole
-- milliseconds; tiers keep limit x window <= 2^52, so every figure is an exact Lua number.
--
-- KEYS[i]      tier i's state, a hash: its counters, and the key's latest time (t) and the end
--              of its block (b), which every tier of the key keeps
-- KEYS[n + j]  for the j-th SLIDING_LOG tier among the n tiers: its log, a sorted set
-- ARGV[1]      now in epoch ms, or '' to use the server's TIME
-- ARGV[2]      cost
-- ARGV[3]      an id unique to this call, for SLIDING_LOG members
-- ARGV[4]      the server's TIME in epoch ms after which the call is no longer decided, or '' for
--              no deadline: a call that reaches the server late (it waited behind a paused or
--              stalled server, and its caller has given up) must not be counted
-- ARGV[5]      the longest the caller waits for a permit, in ms: a call that does not fit now is
--              reserved when every tier is a token bucket and it fits within that (0: never)
-- ARGV[6 + 5 * (i - 1) ...]  tier i: algorithm (fw, sw, sl, tb), limit, window ms,
--              countRejected (1 or 0), blockFor ms
-- Returns {allowed (1 or 0), limit, remaining, resetAfter ms, retryAfter ms, server TIME ms,
-- the time the call was decided at (for take-back.lua), the binding tier's window ms, the ms
-- until a reserved permit is due (0 when due now)}, or {-1, server TIME ms} when the deadline
-- had passed and nothing was done.
--
-- Written for the server's cost: per tier an HMGET, an HSET and, unless the expiry stays where
-- it is, a PEXPIRE, besides one TIME; one table per tier.

local floor, max, min = math.floor, math.max, math.min
local time = redis.call('TIME')
local server_now = tonumber(time[1]) * 1000 + floor(tonumber(time[2]) / 1000)
local deadline = tonumber(ARGV[4])
if deadline and server_now > deadline then
  return { -1, server_now }
end
local cost = tonumber(ARGV[2])
local max_wait = tonumber(ARGV[5])
local count = (#ARGV - 5) / 5

-- Read every tier; the key's time never runs backwards, even if a clock is set back or
-- instances disagree, and its block is the latest any tier holds.
local now = tonumber(ARGV[1]) or server_now
local blocked_until = 0
local tiers = {}
local logs = 0
for i = 1, count do
  local a = 6 + 5 * (i - 1)
  local state = redis.call('HMGET', KEYS[i], 't', 'b', 's', 'n', 'p')
  local latest = tonumber(state[1])
  if latest and latest > now then now = latest end
  local block = tonumber(state[2])
  if block and block > blocked_until then blocked_until = block end
  local log = false
  if ARGV[a] == 'sl' then
    logs = logs + 1
    log = KEYS[count + logs]
  end
  -- fw: s window start, n count; sw: s, n current count, p previous count;
  -- sl: n permits in the log; tb: n tokens missing, in 1/window units, refilled up to at.
  tiers[i] = { key = KEYS[i], algorithm = ARGV[a], limit = tonumber(ARGV[a + 1]), window = tonumber(ARGV[a + 2]),
               count_rejected = ARGV[a + 3] == '1', block_for = tonumber(ARGV[a + 4]), log = log,
               s = tonumber(state[3]), n = tonumber(state[4]) or 0, p = tonumber(state[5]) or 0, at = latest,
               taken = false, newest = false, expiry_kept = false }
end

local function ceil_div(a, b)
  return -floor(-a / b)
end

-- Rolls each tier forward to now: new windows, entries leaving the log, refills.
for i = 1, count do
  local t = tiers[i]
  local algorithm = t.algorithm
  if algorithm == 'fw' or algorithm == 'sw' then
    local start = now - now % t.window
    if not t.s then
      t.s, t.n, t.p = start, 0, 0
    elseif start > t.s then
      if algorithm == 'sw' and start - t.window == t.s then t.p = t.n else t.p = 0 end
      t.s, t.n = start, 0
    else
      -- Counts in the same window keep the key's expiry where it is: the end of the window
      -- (fw), or of the next one (sw).
      t.expiry_kept = t.n > 0
    end
  elseif algorithm == 'sl' then
    -- An entry exactly one window old no longer counts.
    local expired = redis.call('ZRANGEBYSCORE', t.log, '-inf', now - t.window)
    if #expired > 0 then
      for _, member in ipairs(expired) do t.n = t.n - tonumber(string.match(member, ':(%d+)$')) end
      redis.call('ZREMRANGEBYSCORE', t.log, '-inf', now - t.window)
    end
  else
    local refill = max(now - (t.at or now), 0) * t.limit
    if refill >= t.n then t.n = 0 else t.n = t.n - refill end
  end
end

-- Permits the tier admits now; negative when counted rejections ran past the limit.
local function available(t)
  local algorithm = t.algorithm
  if algorithm == 'sw' then
    return t.limit - ceil_div(t.p * (t.window - (now - t.s)), t.window) - t.n
  elseif algorithm == 'tb' then
    return t.limit - ceil_div(t.n, t.window)
  end
  return t.limit - t.n
end

-- Counts the call. Counted rejections may run up to one more window's worth past the limit
-- (never lessening a bucket's deeper debt from reservations); a log keeps at most limit
-- permits, the newest, one entry per call whatever its cost.
local function take(t)
  t.taken = true
  local algorithm = t.algorithm
  if algorithm == 'tb' then
    t.n = max(t.n, min(2 * t.limit * t.window, t.n + cost * t.window))
  elseif algorithm == 'sl' then
    redis.call('ZADD', t.log, now, ARGV[3] .. ':' .. cost)
    t.newest = now
    t.n = t.n + cost
    while t.n > t.limit do
      local oldest = redis.call('ZPOPMIN', t.log)
      local permits, excess = tonumber(string.match(oldest[1], ':(%d+)$')), t.n - t.limit
      if permits > excess then
        redis.call('ZADD', t.log, oldest[2], string.match(oldest[1], '^(.*):%d+$') .. ':' .. (permits - excess))
        t.n = t.limit
      else
        t.n = t.n - permits
      end
    end
  else
    t.n = min(2 * t.limit, t.n + cost)
  end
end

-- Milliseconds until the tier is back to its full limit; zero when it is.
local function reset(t)
  local algorithm = t.algorithm
  if algorithm == 'tb' then return ceil_div(t.n, t.limit) end
  if t.n == 0 and (algorithm ~= 'sw' or t.p == 0) then return 0 end
  if algorithm == 'sl' then
    if not t.newest then t.newest = tonumber(redis.call('ZRANGE', t.log, -1, -1, 'WITHSCORES')[2]) end
    return t.newest + t.window - now
  end
  local left = t.window - (now - t.s)
  if algorithm == 'sw' and t.n > 0 then return left + t.window end
  return left
end

-- Milliseconds until a call of this cost fits; zero when it fits now.
local function wait(t)
  local algorithm = t.algorithm
  local excess = cost - available(t)
  if excess <= 0 then return 0 end
  if algorithm == 'fw' then
    return t.s + t.window - now
  elseif algorithm == 'tb' then
    return ceil_div(t.n + (cost - t.limit) * t.window, t.limit)
  elseif algorithm == 'sl' then
    -- The call fits once the oldest permits, up to the excess, have left the window.
    local leaving, rank = 0, 0
    while true do
      local calls = redis.call('ZRANGE', t.log, rank, rank + 63, 'WITHSCORES')
      for i = 1, #calls, 2 do
        leaving = leaving + tonumber(string.match(calls[i], ':(%d+)$'))
        if leaving >= excess then return tonumber(calls[i + 1]) + t.window - now end
      end
      rank = rank + 64
    end
  end
  local elapsed = now - t.s
  local room_now = t.limit - t.n - cost
  if room_now >= 0 then
    -- Within this window, once the previous window's weight has decayed enough.
    return t.window - floor(room_now * t.window / t.p) - elapsed
  end
  -- In the next window, where this window's count decays as the previous one.
  local elapsed_next = 0
  if t.n > 0 then elapsed_next = t.window - floor((t.limit - cost) * t.window / t.n) end
  return t.window - elapsed + elapsed_next
end

local function remaining(t)
  return max(0, min(t.limit, available(t)))
end

-- The tier with the fewest permits left; of those, the one that takes longest to reset.
local function tightest()
  if count == 1 then return tiers[1] end
  local best, fewest, longest = 1, math.huge, -1
  for i, t in ipairs(tiers) do
    local left, until_full = remaining(t), reset(t)
    if left < fewest or (left == fewest and until_full > longest) then
      best, fewest, longest = i, left, until_full
    end
  end
  return tiers[best]
end

local blocked = blocked_until > now
local fits = not blocked
for i = 1, count do
  if fits and available(tiers[i]) < cost then fits = false end
end

-- A call that does not fit now is reserved when every tier is a token bucket that lets it in
-- within max_wait: each runs into debt (up to 2^53 units, so that figures stay exact), and the
-- caller's permit is due after the longest wait.
local delay = -1
if not fits and not blocked and max_wait > 0 then
  delay = 0
  for i = 1, count do
    local t = tiers[i]
    if t.algorithm ~= 'tb' or t.n > 2 ^ 53 - cost * t.window then
      delay = -1
      break
    end
    delay = max(delay, wait(t))
  end
  if delay > max_wait then delay = -1 end
end

local result
if fits or delay > 0 then
  for i = 1, count do
    local t = tiers[i]
    if fits then take(t) else t.taken, t.n = true, t.n + cost * t.window end
  end
  local t = tightest()
  result = { 1, t.limit, remaining(t), reset(t), 0, server_now, now, t.window, max(delay, 0) }
else
  local block = 0
  if not blocked then
    for i = 1, count do
      local t = tiers[i]
      if available(t) < cost then block = max(block, t.block_for) end
    end
  end
  for i = 1, count do
    if tiers[i].count_rejected then take(tiers[i]) end
  end
  if block > 0 then blocked_until = now + block end

  -- The binding tier waits longest; if only the block rejects, it is the tightest tier.
  local binding, longest = nil, 0
  for i = 1, count do
    local tier_wait = wait(tiers[i])
    if tier_wait > longest then binding, longest = tiers[i], tier_wait end
  end
  binding = binding or tightest()
  local block_left = max(0, blocked_until - now)
  local left = remaining(binding)
  if block_left > 0 then left = 0 end
  result = { 0, binding.limit, left, max(block_left, reset(binding)), max(block_left, longest),
             server_now, now, binding.window, 0 }
end

-- Every tier keeps the key's time and block, and lives as long as its own state or the block;
-- a tier back to full, with no block, equals a fresh one and is deleted.
local block_left = max(0, blocked_until - now)
for i = 1, count do
  local t = tiers[i]
  local keep = max(block_left, reset(t))
  if keep == 0 then
    if t.log then redis.call('DEL', t.key, t.log) else redis.call('DEL', t.key) end
  else
    local algorithm = t.algorithm
    if algorithm == 'sw' then
      redis.call('HSET', t.key, 't', now, 'n', t.n, 's', t.s, 'p', t.p)
    elseif algorithm == 'fw' then
      redis.call('HSET', t.key, 't', now, 'n', t.n, 's', t.s)
    else
      redis.call('HSET', t.key, 't', now, 'n', t.n)
    end
    if block_left > 0 then redis.call('HSET', t.key, 'b', blocked_until) end
    if block_left > 0 or not t.expiry_kept then redis.call('PEXPIRE', t.key, keep) end
    if t.log then redis.call('PEXPIRE', t.log, keep) end
  end
end
return result
