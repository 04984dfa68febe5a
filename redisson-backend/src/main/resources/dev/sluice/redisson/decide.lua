-- Decides calls, one after the other in the order given, each for every tier of its key,
-- atomically: a call that fits is counted, and one whose caller may wait is reserved if it will
-- fit in time. Deciding many calls in one script call spares Redis the cost of a command per
-- call, and calls on one key read and write its state once for all of them.
-- The same rules as dev.sluice.InMemoryRateLimitStore (KeyState and TierState), in whole
-- milliseconds; tiers keep limit x window <= 2^52, so every figure is an exact Lua number.
--
-- ARGV[2c - 1]  call c's id, unique to it, which names its SLIDING_LOG and CONCURRENCY entries
--               ('' without such tiers)
-- ARGV[2c]      call c's figures, little-endian doubles (struct '<ddddd'), then for each tier its
--               algorithm in two characters and its figures ('<c2dddd'):
--                 now in epoch ms, or NaN to use the server's TIME
--                 cost
--                 the server's TIME in epoch ms after which the call is no longer decided, or NaN
--                 for no deadline: a call that reaches the server late (it waited behind a paused
--                 or stalled server, and its caller has given up) must not be counted
--                 the longest the caller waits for a permit, in ms: a call that does not fit now
--                 is reserved when every tier is a token bucket and it fits within that (0: never)
--                 how many calls these are: identical concurrent calls (without SLIDING_LOG tiers,
--                 whose entries each call names) are sent once, and decided one after the other
--                 tier i: algorithm (fw, sw, sl, tb, cc), limit, window ms (a concurrency tier's
--                 lease), countRejected (1 or 0), blockFor ms
-- KEYS          each call's keys in turn: for a call of n tiers, tier i's state, a hash whose
--               field v packs seven doubles (struct '<ddddddd'): the key's latest time and the end
--               of its block, which every tier of the key keeps, the tier's counters s, n and p,
--               when the hash expires on the server's clock (expiry.lua), and the latest time a
--               call found the tier back to
--               full, since when it has counted without a break (give-back.lua gives back no call
--               admitted before; a state of an earlier version, of six doubles, does not say), all
--               in ms; then the log of each of its SLIDING_LOG and CONCURRENCY tiers, a sorted set.
--               Calls on one key name the same keys again.
-- A CONCURRENCY tier (cc) keeps, like a sliding log, its permits n in p entries of its log, one
-- per admitted call that holds them, named as a sliding log's; an entry's score is when its lease
-- ends, in the key's time. Leases that ended are dropped first; renew.lua moves the end of live
-- ones, give-back.lua drops the entry of a call that ended. Its state lives until its last lease
-- ends. A call it rejects is told to try again after RETRY ms: when a permit comes free is not
-- known.
-- Packed, the figures need no parsing, and Redis makes two Lua strings for the arguments of a
-- call rather than five and more per tier.
-- Returns results in the calls' order (identical calls sent once counting as many), each ten
-- little-endian doubles (struct '<dddddddddd'), which the client reads without parsing a number:
-- allowed (1 or 0), limit, remaining, resetAfter ms, retryAfter ms, server TIME ms, the time the
-- call was decided at (for give-back.lua), the binding tier's window ms (-1 for a concurrency
-- tier), the ms until a reserved
-- permit is due (0 when due now), and how many calls in a row the result answers: identical calls
-- admitted together, each with the cost fewer remaining than the one before, or rejected alike.
-- A call whose deadline had passed, and for which nothing was done, has -1, the server's TIME ms
-- and zeros. One result for a run of calls spares the server a reply and a string for each.
--
-- Whatever Redis holds, every loop is bounded, by the calls, their tiers or a log's entries: a
-- script that runs on makes Redis answer BUSY to every client. A sliding log's hash and log may
-- disagree (maxmemory evicts one of them, an operator deletes one, a backup restores them
-- apart): the log is the truth, and its permits are counted again from it.
--
-- Written for the server's cost, most of which is calls: into Redis, and into functions. Per
-- key an HGET when first named and an HSET of one packed field at the end (reading and writing
-- decimal strings cost more than the decision), and a PEXPIREAT only when the state must outlive
-- the expiry last set, which expiry.lua rounds up to the next 1,024 ms, so that a bucket or log
-- whose end moves with every call moves it about once a second (a sliding log adds its ZCARD and
-- what its log needs); besides one TIME. Helper functions take the time and
-- the cost as arguments rather than capture them (a captured variable costs an allocation on
-- every call), and divisions round with % rather than math.floor.

local server_now = server_clock()
local RETRY = 10

-- The permits of a sliding log's entry, named by its call's id and its cost.
local function permits(member)
  return tonumber(string.match(member, ':(%d+)$')) or 0
end

-- Counts a sliding log's permits again from its entries, a page at a time.
local function count_log(t, entries)
  local n = 0
  for rank = 0, entries - 1, 1024 do
    for _, member in ipairs(redis.call('ZRANGE', t.log, rank, rank + 1023)) do n = n + permits(member) end
  end
  t.n, t.p = n, entries
end

-- The state of each tier the calls name, by its key: read when first named, decided on by
-- every call naming it in turn, written back once at the end.
-- fw: s window start, n count; sw: s, n current count, p previous count; sl: n permits in the
-- log, p its entries; tb: n tokens missing, in 1/window units, refilled up to at.
-- latest: the key's time, block: the end of its block (false and 0 while the tier is fresh);
-- e: when the hash expires, on the server's clock; since: when a call last found the tier back to
-- full (math.huge when not known); expire: whether the hash must be given e;
-- logged: whether its log must be; gone: whether the tier is back to full and is deleted;
-- newest: the time of a sliding log's newest entry, once known.
local states, named = {}, {}

local function state_of(key, log)
  local t = states[key]
  if t then return t end
  t = { key = key, log = log, s = false, n = 0, p = 0, at = false, latest = false, block = 0, e = 0,
        since = math.huge, expire = false, logged = false, gone = false }
  local state = redis.call('HGET', key, 'v')
  if state then
    t.latest, t.block, t.s, t.n, t.p, t.e = struct.unpack('<dddddd', state)
    if #state >= 56 then t.since = struct.unpack('<d', state, 49) end
    t.at = t.latest
  end
  if log then
    -- A log that does not hold the entries the hash says (one of them is gone, they were
    -- restored apart, or the state is of a version that did not keep p) is counted again.
    local entries = redis.call('ZCARD', log)
    if entries ~= t.p or (entries == 0 and t.n ~= 0) then count_log(t, entries) end
  end
  states[key] = t
  named[#named + 1] = t
  return t
end

-- Permits the tier admits now; negative when counted rejections ran past the limit. Divisions
-- round up: (a + (-a) % b) / b is ceil(a / b) for whole numbers.
local function available(t, now)
  local algorithm = t.algorithm
  if algorithm == 'sw' then
    local weighted = t.p * (t.window - (now - t.s))
    return t.limit - (weighted + (-weighted) % t.window) / t.window - t.n
  elseif algorithm == 'tb' then
    return t.limit - (t.n + (-t.n) % t.window) / t.window
  end
  return t.limit - t.n
end

-- Counts the call. Counted rejections may run up to one more window's worth past the limit
-- (never lessening a bucket's deeper debt from reservations); a log keeps at most limit
-- permits, the newest, one entry per call whatever its cost.
local function take(t, now, cost, id)
  local algorithm = t.algorithm
  if algorithm == 'tb' then
    local counted, most = t.n + cost * t.window, 2 * t.limit * t.window
    if counted > most then counted = most end
    if counted > t.n then t.n = counted end
  elseif algorithm == 'cc' then
    t.p = t.p + redis.call('ZADD', t.log, now + t.window, string.format('%s:%d', id, cost))
    t.added = true
    t.n = t.n + cost
  elseif algorithm == 'sl' then
    -- '%d', not '..': Lua writes a number of 15 digits or more in exponent form.
    t.p = t.p + redis.call('ZADD', t.log, now, string.format('%s:%d', id, cost))
    t.newest, t.added = now, true
    t.n = t.n + cost
    -- Each turn takes an entry, or ends: at most as many turns as the log has entries.
    while t.n > t.limit and t.p > 0 do
      local oldest = redis.call('ZPOPMIN', t.log)
      local taken, excess = permits(oldest[1]), t.n - t.limit
      t.p = t.p - 1
      if taken > excess then
        t.p = t.p + redis.call('ZADD', t.log, oldest[2], string.format('%s:%d',
                                                                       string.match(oldest[1], '^(.*):%d+$'),
                                                                       taken - excess))
        t.n = t.limit
      else
        t.n = t.n - taken
      end
    end
    if t.p == 0 then t.n = 0 end
  else
    local counted = t.n + cost
    if counted > 2 * t.limit then counted = 2 * t.limit end
    t.n = counted
  end
end

-- Milliseconds until the tier is back to its full limit; zero when it is.
local function reset(t, now)
  local algorithm = t.algorithm
  if algorithm == 'tb' then return (t.n + (-t.n) % t.limit) / t.limit end
  if t.n == 0 and (algorithm ~= 'sw' or t.p == 0) then return 0 end
  if algorithm == 'cc' then return RETRY end
  if algorithm == 'sl' then
    if not t.newest then t.newest = tonumber(redis.call('ZRANGE', t.log, -1, -1, 'WITHSCORES')[2]) end
    return t.newest + t.window - now
  end
  local left = t.window - (now - t.s)
  if algorithm == 'sw' and t.n > 0 then return left + t.window end
  return left
end

-- Milliseconds until the oldest permits of a sliding log, up to the excess, have left the window;
-- or nil and the permits the log holds, when they are fewer.
local function log_wait(t, now, excess)
  local leaving = 0
  for rank = 0, t.p - 1, 64 do
    local calls = redis.call('ZRANGE', t.log, rank, rank + 63, 'WITHSCORES')
    for i = 1, #calls, 2 do
      leaving = leaving + permits(calls[i])
      if leaving >= excess then return tonumber(calls[i + 1]) + t.window - now end
    end
  end
  return nil, leaving
end

-- Milliseconds until a call of this cost fits; zero when it fits now.
local function wait(t, now, cost)
  local algorithm = t.algorithm
  local excess = cost - available(t, now)
  if excess <= 0 then return 0 end
  if algorithm == 'fw' then
    return t.s + t.window - now
  elseif algorithm == 'cc' then
    return RETRY
  elseif algorithm == 'tb' then
    local missing = t.n + (cost - t.limit) * t.window
    return (missing + (-missing) % t.limit) / t.limit
  elseif algorithm == 'sl' then
    -- The call fits once the oldest permits, up to the excess, have left the window.
    local due, held = log_wait(t, now, excess)
    if due then return due end
    -- The tier counts permits its log does not hold: what the log holds is the count.
    t.n = held
    excess = cost - available(t, now)
    if excess <= 0 then return 0 end
    return log_wait(t, now, excess) or 0
  end
  local elapsed = now - t.s
  local room_now = t.limit - t.n - cost
  if room_now >= 0 then
    -- Within this window, once the previous window's weight has decayed enough.
    return t.window - math.floor(room_now * t.window / t.p) - elapsed
  end
  -- In the next window, where this window's count decays as the previous one.
  local elapsed_next = 0
  if t.n > 0 then elapsed_next = t.window - math.floor((t.limit - cost) * t.window / t.n) end
  return t.window - elapsed + elapsed_next
end

-- The binding tier's window as a result gives it: -1 for a concurrency tier, which has none.
local function window_of(t)
  if t.algorithm == 'cc' then return -1 end
  return t.window
end

local function remaining(t, now)
  local left = available(t, now)
  if left < 0 then return 0 elseif left > t.limit then return t.limit end
  return left
end

-- The tier with the fewest permits left; of those, the one that takes longest to reset.
local function tightest(tiers, now)
  if #tiers == 1 then return tiers[1] end
  local best, fewest, longest = 1, math.huge, -1
  for i, t in ipairs(tiers) do
    local left, until_full = remaining(t, now), reset(t, now)
    if left < fewest or (left == fewest and until_full > longest) then
      best, fewest, longest = i, left, until_full
    end
  end
  return tiers[best]
end

local results = {}

-- Decides calls with the same figures whose keys start after KEYS[first], adding their results;
-- returns how many keys they named.
local function decide(id, figures, first)
  local now, cost, deadline, max_wait, calls = struct.unpack('<ddddd', figures)
  local count = (#figures - 40) / 34

  -- Read every tier; the key's time never runs backwards, even if a clock is set back or
  -- instances disagree, and its block is the latest any tier holds.
  local blocked_until = 0
  local tiers = {}
  local logs = 0
  for i = 1, count do
    local algorithm, limit, window = struct.unpack('<c2dd', figures, 41 + 34 * (i - 1))
    local log = false
    if algorithm == 'sl' or algorithm == 'cc' then
      logs = logs + 1
      log = KEYS[first + count + logs]
    end
    tiers[i] = { algorithm = algorithm, limit = limit, window = window, log = log }
  end
  -- Comparisons with NaN are false: no deadline never passes.
  if server_now > deadline then
    results[#results + 1] = struct.pack('<dddddddddd', -1, server_now, 0, 0, 0, 0, 0, 0, 0, calls)
    return count + logs
  end
  local client_clock = now == now
  if not client_clock then now = server_now end
  for i = 1, count do
    local call_tier = tiers[i]
    local t = state_of(KEYS[first + i], call_tier.log)
    t.algorithm, t.limit, t.window = call_tier.algorithm, call_tier.limit, call_tier.window
    t.added = false
    if t.latest and t.latest > now then now = t.latest end
    if t.block > blocked_until then blocked_until = t.block end
    tiers[i] = t
  end

  -- Rolls each tier forward to now: new windows, entries leaving the log, refills.
  for i = 1, count do
    local t = tiers[i]
    local algorithm = t.algorithm
    if algorithm == 'fw' or algorithm == 'sw' then
      local start = now - now % t.window
      if not t.s then
        t.s = start
      elseif start > t.s then
        if algorithm == 'sw' and start - t.window == t.s then t.p = t.n else t.p = 0 end
        t.s, t.n = start, 0
      end
    elseif algorithm == 'sl' or algorithm == 'cc' then
      -- An entry exactly one window old no longer counts, nor one whose lease ends now.
      local gone = now - t.window
      if algorithm == 'cc' then gone = now end
      local expired = redis.call('ZRANGEBYSCORE', t.log, '-inf', gone)
      if #expired > 0 then
        for _, member in ipairs(expired) do t.n = t.n - permits(member) end
        redis.call('ZREMRANGEBYSCORE', t.log, '-inf', gone)
        t.p = t.p - #expired
        if t.n < 0 then count_log(t, t.p) end
      end
    else
      local refill = (now - (t.at or now)) * t.limit
      if refill >= t.n then t.n = 0 else t.n = t.n - refill end
    end
    -- Back to full, as a fresh tier: it counts no call admitted before now.
    if t.n == 0 and (algorithm ~= 'sw' or t.p == 0) then t.since = now end
  end

  -- Identical calls after one admitted on window tiers alone take the same from every tier, so
  -- their binding tier stays and its remaining falls by the cost with each: they are admitted
  -- together while they fit.
  local windows = max_wait == 0
  for i = 1, count do
    if tiers[i].algorithm ~= 'fw' and tiers[i].algorithm ~= 'sw' then windows = false end
  end
  local call = 1
  while call <= calls do
    local blocked = blocked_until > now
    local fits = not blocked
    for i = 1, count do
      if fits and available(tiers[i], now) < cost then fits = false end
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
        delay = math.max(delay, wait(t, now, cost))
      end
      if delay > max_wait then delay = -1 end
    end

    -- How many calls in a row the result answers.
    local run = 1
    if fits or delay > 0 then
      for i = 1, count do
        local t = tiers[i]
        if fits then take(t, now, cost, id) else t.n = t.n + cost * t.window end
      end
      local t = tightest(tiers, now)
      local left, until_full = remaining(t, now), reset(t, now)
      if windows then
        local more = calls - call
        for i = 1, count do
          local fit = math.floor(available(tiers[i], now) / cost)
          if fit < more then more = fit end
        end
        if more > 0 then
          for i = 1, count do take(tiers[i], now, more * cost, id) end
          run = run + more
        end
      end
      results[#results + 1] = struct.pack('<dddddddddd', 1, t.limit, left, until_full, 0, server_now, now,
                                          window_of(t), fits and 0 or delay, run)
    else
      local block, counted = 0, false
      for i = 1, count do
        local t = tiers[i]
        -- Read only here, which few calls reach: the tier's figures after its algorithm, limit and window.
        local count_rejected, block_for = struct.unpack('<dd', figures, 41 + 34 * (i - 1) + 18)
        if not blocked and available(t, now) < cost then block = math.max(block, block_for) end
        if count_rejected == 1 then
          take(t, now, cost, id)
          counted = true
        end
      end
      if block > 0 then blocked_until = now + block end
      -- A rejection that changed nothing is what every identical call after it gets.
      if not counted and block == 0 then run = calls - call + 1 end

      -- The binding tier waits longest; if only the block rejects, it is the tightest tier.
      local binding, longest = nil, 0
      for i = 1, count do
        local tier_wait = wait(tiers[i], now, cost)
        if tier_wait > longest then binding, longest = tiers[i], tier_wait end
      end
      binding = binding or tightest(tiers, now)
      local block_left = math.max(0, blocked_until - now)
      local left = remaining(binding, now)
      if block_left > 0 then left = 0 end
      results[#results + 1] = struct.pack('<dddddddddd', 0, binding.limit, left,
                                          math.max(block_left, reset(binding, now)), math.max(block_left, longest),
                                          server_now, now, window_of(binding), 0, run)
    end
    call = call + run
  end

  -- Every tier keeps the key's time and block, and lives as long as its own state or the block;
  -- a tier back to full, with no block, equals a fresh one and is deleted.
  local block_left = 0
  if blocked_until > now then block_left = blocked_until - now end
  for i = 1, count do
    local t = tiers[i]
    local keep = reset(t, now)
    if t.algorithm == 'cc' and keep > 0 then
      -- Until the last lease ends.
      keep = (tonumber(redis.call('ZRANGE', t.log, -1, -1, 'WITHSCORES')[2]) or now) - now
    end
    if block_left > keep then keep = block_left end
    if keep == 0 then
      if t.log then redis.call('DEL', t.log) end
      t.s, t.n, t.p, t.at, t.latest, t.block, t.e, t.newest, t.since = false, 0, 0, false, false, 0, 0, false, math.huge
      t.expire, t.logged, t.gone = false, false, true
    else
      local expires = expires_at(now, keep, server_now, client_clock)
      if expires > t.e then t.e, t.expire = expires, true end
      -- Redis deletes a log its last entry left, and an entry added makes it again, without expiry.
      if t.log and (t.expire or t.added) then t.logged = true end
      t.at, t.latest, t.block, t.gone = now, now, blocked_until, false
    end
  end
  return count + logs
end

local first = 0
for c = 1, #ARGV / 2 do
  first = first + decide(ARGV[2 * c - 1], ARGV[2 * c], first)
end

for _, t in ipairs(named) do
  if t.gone then
    redis.call('DEL', t.key)
  else
    redis.call('HSET', t.key, 'v', struct.pack('<ddddddd', t.latest, t.block, t.s or 0, t.n, t.p, t.e, t.since))
    if t.expire then redis.call('PEXPIREAT', t.key, t.e) end
    if t.logged then redis.call('PEXPIREAT', t.log, t.e) end
  end
end
return table.concat(results)
