-- Pauses a key (RateLimitStore.pause): every tier named keeps a block of the key that ends the
-- pause's length after the key's time, unless a block it or another named tier holds ends later.
-- decide.lua rejects every call of the key while any of its tiers holds a block, as a block that
-- a tier's blockFor started: the pause is one, and nothing else of the key changes.
--
-- ARGV[1]  figures, little-endian doubles (struct '<ddddd'), then each tier as decide.lua reads
--          it ('<c2dddd'):
--            now in epoch ms, or NaN to use the server's TIME
--            the pause in ms, at least 1
--            (three unused)
-- KEYS     as for decide.lua: each tier's state, then the logs of SLIDING_LOG tiers, which a
--          pause leaves as they are
-- Returns 1.
--
-- A tier without state gets a fresh tier's: no counts, full since the key's time, which is its
-- latest. A tier with state keeps its counts and its latest time (a token bucket refills from
-- it). Every hash lives at least until the block ends (expiry.lua), so that after the pause the
-- key is decided as a fresh one or as its counts say. Logs keep their own expiry: their entries leave no later.

local figures = ARGV[1]
local now, pause = struct.unpack('<dd', figures)
local server_now = server_clock()
local client_clock = now == now
if not client_clock then now = server_now end
local count = (#figures - 40) / 34

-- The key's time never runs backwards, and its block is the latest any tier holds.
local states = {}
local blocked_until = 0
for i = 1, count do
  local state = redis.call('HGET', KEYS[i], 'v')
  states[i] = state
  if state then
    local latest, block = struct.unpack('<dd', state)
    if latest > now then now = latest end
    if block > blocked_until then blocked_until = block end
  end
end
if now + pause > blocked_until then blocked_until = now + pause end
local expires = expires_at(now, blocked_until - now, server_now, client_clock)

for i = 1, count do
  local state = states[i]
  -- A fresh tier: the key's time, no block, no window start, no counts, no expiry, full since now.
  local latest, block, s, n, p, e, since = now, 0, 0, 0, 0, 0, now
  if state then
    latest, block, s, n, p, e = struct.unpack('<dddddd', state)
    since = math.huge
    if #state >= 56 then since = struct.unpack('<d', state, 49) end
  end
  local expire = expires > e
  if expire then e = expires end
  redis.call('HSET', KEYS[i], 'v', struct.pack('<ddddddd', latest, blocked_until, s, n, p, e, since))
  if expire then redis.call('PEXPIREAT', KEYS[i], e) end
end
return 1
