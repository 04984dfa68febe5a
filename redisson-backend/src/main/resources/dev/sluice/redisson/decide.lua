-- Decides one call for every tier of one key, atomically, and counts it if it fits.
-- The same rules as dev.sluice.InMemoryRateLimitStore (KeyState and TierState), in whole
-- milliseconds; tiers keep limit x window <= 2^52, so every figure is an exact Lua number.
--
-- KEYS[1]      the key's own state: the latest time it saw (t), and the end of a block (b)
-- KEYS[1 + i]  the state of tier i
-- ARGV[1]      now in epoch ms, or '' to use the server's TIME
-- ARGV[2]      cost
-- ARGV[3]      an id unique to this call, for SLIDING_LOG members
-- ARGV[4]      the server's TIME in epoch ms after which the call is no longer decided, or '' for
--              no deadline: a call that reaches the server late (it waited behind a paused or
--              stalled server, and its caller has given up) must not be counted
-- ARGV[5 + 5 * (i - 1) ...]  tier i: algorithm (fw, sw, sl, tb), limit, window ms,
--              countRejected (1 or 0), blockFor ms
-- Returns {allowed (1 or 0), limit, remaining, resetAfter ms, retryAfter ms, server TIME ms,
-- the time the call was decided at (for take-back.lua), the binding tier's window ms}, or
-- {-1, server TIME ms} when the deadline had passed and nothing was done.

local time = redis.call('TIME')
local server_now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local deadline = tonumber(ARGV[4])
if deadline and server_now > deadline then
  return { -1, server_now }
end
local now = tonumber(ARGV[1]) or server_now
-- Time never runs backwards for a key, even if a clock is set back or instances disagree.
local latest, blocked_until = unpack(redis.call('HMGET', KEYS[1], 't', 'b'))
now = math.max(now, tonumber(latest) or now)
blocked_until = tonumber(blocked_until) or 0
local cost = tonumber(ARGV[2])
local call_id = ARGV[3]

local function ceil_div(a, b)
  return -math.floor(-a / b)
end

local function expire(key, ms)
  redis.call('PEXPIRE', key, math.max(1, ms))
end

-- Each algorithm: load (roll the state forward to now), available, take, wait, reset, save.

local fixed_window = {}
function fixed_window.load(t)
  local s, n = unpack(redis.call('HMGET', t.key, 's', 'n'))
  t.s, t.n = tonumber(s), tonumber(n) or 0
  local start = now - now % t.window
  if not t.s or start > t.s then t.s, t.n = start, 0 end
end
function fixed_window.available(t) return t.limit - t.n end
-- Counted rejections past the limit change no decision beyond one more window's worth.
function fixed_window.take(t) t.n = math.min(2 * t.limit, t.n + cost) end
function fixed_window.wait(t)
  if t.n + cost <= t.limit then return 0 end
  return t.s + t.window - now
end
function fixed_window.reset(t)
  if t.n == 0 then return 0 end
  return t.s + t.window - now
end
function fixed_window.save(t)
  redis.call('HSET', t.key, 's', t.s, 'n', t.n)
  expire(t.key, fixed_window.reset(t))
end

-- Current and previous window counts; the previous one weighs what the sliding window still covers.
local sliding_window = {}
function sliding_window.load(t)
  local s, c, p = unpack(redis.call('HMGET', t.key, 's', 'c', 'p'))
  t.s, t.c, t.p = tonumber(s), tonumber(c) or 0, tonumber(p) or 0
  local start = now - now % t.window
  if not t.s then
    t.s = start
  elseif start > t.s then
    if start - t.window == t.s then t.p = t.c else t.p = 0 end
    t.s, t.c = start, 0
  end
end
local function weighted(t)
  return ceil_div(t.p * (t.window - (now - t.s)), t.window) + t.c
end
function sliding_window.available(t) return t.limit - weighted(t) end
function sliding_window.take(t) t.c = math.min(2 * t.limit, t.c + cost) end
function sliding_window.wait(t)
  if weighted(t) + cost <= t.limit then return 0 end
  local elapsed = now - t.s
  local room_now = t.limit - t.c - cost
  if room_now >= 0 then
    -- Within this window, once the previous window's weight has decayed enough.
    return t.window - math.floor(room_now * t.window / t.p) - elapsed
  end
  -- In the next window, where this window's count decays as the previous one.
  local elapsed_next = 0
  if t.c > 0 then elapsed_next = t.window - math.floor((t.limit - cost) * t.window / t.c) end
  return t.window - elapsed + elapsed_next
end
function sliding_window.reset(t)
  local left = t.window - (now - t.s)
  if t.c > 0 then return left + t.window end
  if t.p > 0 then return left end
  return 0
end
function sliding_window.save(t)
  redis.call('HSET', t.key, 's', t.s, 'c', t.c, 'p', t.p)
  expire(t.key, sliding_window.reset(t))
end

-- A sorted set of calls scored by time, each member '<call id>:<permits>', one per call whatever
-- its cost; their total is kept in the key's own state as field 'l<window>'. At most limit
-- permits, the newest, are kept.
local sliding_log = {}
local function permits_of(member)
  return tonumber(string.match(member, ':(%d+)$'))
end
function sliding_log.load(t)
  t.field = 'l' .. t.window
  t.total = tonumber(redis.call('HGET', KEYS[1], t.field)) or 0
  -- An entry exactly one window old no longer counts.
  local expired = redis.call('ZRANGEBYSCORE', t.key, '-inf', now - t.window)
  if #expired > 0 then
    for _, member in ipairs(expired) do t.total = t.total - permits_of(member) end
    redis.call('ZREMRANGEBYSCORE', t.key, '-inf', now - t.window)
  end
  -- The log may have expired before the key's own state.
  if redis.call('EXISTS', t.key) == 0 then t.total = 0 end
end
function sliding_log.available(t) return t.limit - t.total end
function sliding_log.take(t)
  redis.call('ZADD', t.key, now, call_id .. ':' .. cost)
  t.total = t.total + cost
  while t.total > t.limit do
    local oldest = redis.call('ZPOPMIN', t.key)
    local permits, excess = permits_of(oldest[1]), t.total - t.limit
    if permits > excess then
      redis.call('ZADD', t.key, oldest[2], string.match(oldest[1], '^(.*):%d+$') .. ':' .. (permits - excess))
      t.total = t.limit
    else
      t.total = t.total - permits
    end
  end
end
-- The call fits once the oldest permits, up to the excess, have left the window.
function sliding_log.wait(t)
  local excess = t.total + cost - t.limit
  if excess <= 0 then return 0 end
  local leaving, rank = 0, 0
  while true do
    local calls = redis.call('ZRANGE', t.key, rank, rank + 63, 'WITHSCORES')
    for i = 1, #calls, 2 do
      leaving = leaving + permits_of(calls[i])
      if leaving >= excess then return tonumber(calls[i + 1]) + t.window - now end
    end
    rank = rank + 64
  end
end
function sliding_log.reset(t)
  if t.total == 0 then return 0 end
  return tonumber(redis.call('ZRANGE', t.key, -1, -1, 'WITHSCORES')[2]) + t.window - now
end
function sliding_log.save(t)
  redis.call('HSET', KEYS[1], t.field, t.total)
  expire(t.key, sliding_log.reset(t))
end

-- Tokens missing from a full bucket, in units of 1/window: refills by limit units a ms. A missing
-- key is a full bucket. Counted rejections may run one more full bucket into debt.
local token_bucket = {}
function token_bucket.load(t)
  local m, at = unpack(redis.call('HMGET', t.key, 'm', 't'))
  t.m, t.at = tonumber(m) or 0, tonumber(at) or now
  local elapsed = math.min(math.max(now - t.at, 0), 2 * t.window)
  t.m = math.max(0, t.m - elapsed * t.limit)
  t.at = math.max(t.at, now)
end
function token_bucket.available(t) return t.limit - ceil_div(t.m, t.window) end
function token_bucket.take(t) t.m = math.min(2 * t.limit * t.window, t.m + cost * t.window) end
function token_bucket.wait(t)
  local excess = t.m + cost * t.window - t.limit * t.window
  if excess <= 0 then return 0 end
  return ceil_div(excess, t.limit)
end
function token_bucket.reset(t) return ceil_div(t.m, t.limit) end
function token_bucket.save(t)
  if t.m == 0 then
    redis.call('DEL', t.key)
  else
    redis.call('HSET', t.key, 'm', t.m, 't', t.at)
    expire(t.key, token_bucket.reset(t))
  end
end

local algorithms = { fw = fixed_window, sw = sliding_window, sl = sliding_log, tb = token_bucket }

local tiers = {}
for i = 1, #KEYS - 1 do
  local a = 5 + 5 * (i - 1)
  local t = {
    key = KEYS[1 + i], algorithm = algorithms[ARGV[a]], limit = tonumber(ARGV[a + 1]),
    window = tonumber(ARGV[a + 2]), count_rejected = ARGV[a + 3] == '1', block_for = tonumber(ARGV[a + 4])
  }
  t.algorithm.load(t)
  tiers[i] = t
end

local function remaining(t)
  return math.max(0, math.min(t.limit, t.algorithm.available(t)))
end

-- The tier with the fewest permits left; of those, the one that takes longest to reset.
local function tightest()
  local best, fewest, longest = 1, math.huge, -1
  for i, t in ipairs(tiers) do
    local left, reset = remaining(t), t.algorithm.reset(t)
    if left < fewest or (left == fewest and reset > longest) then
      best, fewest, longest = i, left, reset
    end
  end
  return tiers[best]
end

local blocked = blocked_until > now
local fits = not blocked
for _, t in ipairs(tiers) do
  if fits and t.algorithm.available(t) < cost then fits = false end
end

local result
if fits then
  for _, t in ipairs(tiers) do
    t.algorithm.take(t)
    t.taken = true
  end
  local t = tightest()
  result = { 1, t.limit, remaining(t), t.algorithm.reset(t), 0, server_now, now, t.window }
else
  local block = 0
  if not blocked then
    for _, t in ipairs(tiers) do
      if t.algorithm.available(t) < cost then block = math.max(block, t.block_for) end
    end
  end
  for _, t in ipairs(tiers) do
    if t.count_rejected then
      t.algorithm.take(t)
      t.taken = true
    end
  end
  if block > 0 then blocked_until = now + block end

  -- The binding tier waits longest; if only the block rejects, it is the tightest tier.
  local binding, wait = nil, 0
  for _, t in ipairs(tiers) do
    local tier_wait = t.algorithm.wait(t)
    if tier_wait > wait then binding, wait = t, tier_wait end
  end
  binding = binding or tightest()
  local block_left = math.max(0, blocked_until - now)
  local left = remaining(binding)
  if block_left > 0 then left = 0 end
  result = { 0, binding.limit, left, math.max(block_left, binding.algorithm.reset(binding)),
             math.max(block_left, wait), server_now, now, binding.window }
end

-- Save what changed. A token bucket's refill depends on the limit each call brings, and a sliding
-- log's total on the entries that left it, so both are saved on every call, as the in-memory
-- store advances them. The key's own state lives as long as the block and every tier state,
-- including those of tiers that earlier calls brought.
local keep = math.max(0, blocked_until - now, redis.call('PTTL', KEYS[1]))
for _, t in ipairs(tiers) do
  if t.taken or t.algorithm == token_bucket or t.algorithm == sliding_log then t.algorithm.save(t) end
  keep = math.max(keep, t.algorithm.reset(t))
end
if keep > 0 then
  redis.call('HSET', KEYS[1], 't', now, 'b', blocked_until)
  expire(KEYS[1], keep)
else
  redis.call('DEL', KEYS[1])
end
return result
