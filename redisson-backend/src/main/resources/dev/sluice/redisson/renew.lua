-- Renews the leases of permits that calls of one instance hold in CONCURRENCY tiers, all of them
-- in one script call: each entry still in its log gets its lease's length from now as its end, or
-- keeps a later end, and its log and hash are kept at least until then. An entry that is gone (its
-- lease ended before, or its key was deleted) is not made again: its call holds no permit any more.
--
-- ARGV[1]          now in epoch ms, little-endian double (struct '<d'), or NaN to use the
--                  server's TIME
-- ARGV[1 + l]      lease l's entry in its log, as decide.lua named it
-- ARGV[1 + n + l]  lease l's length in ms, as text
-- KEYS[2l - 1]     lease l's tier state, a hash; KEYS[2l] its log
-- Returns how many leases were renewed.
--
-- Every loop is bounded, by the leases.

local now = struct.unpack('<d', ARGV[1])
local server_now = server_clock()
local client_clock = now == now
if not client_clock then now = server_now end
local leases = #KEYS / 2
local renewed = 0

for l = 1, leases do
  local state, log = KEYS[2 * l - 1], KEYS[2 * l]
  local member, lease = ARGV[1 + l], tonumber(ARGV[1 + leases + l])
  local score = redis.call('ZSCORE', log, member)
  if score then
    -- The key's time, which a clock set back or a skewed instance leaves ahead of now.
    local key_now = now
    local packed = redis.call('HGET', state, 'v')
    if packed then
      local latest = struct.unpack('<d', packed)
      if latest > key_now then key_now = latest end
    end
    local ends = key_now + lease
    if ends > tonumber(score) then redis.call('ZADD', log, 'XX', ends, member) end
    local expires = expires_at(key_now, lease, server_now, client_clock)
    if redis.call('PTTL', log) < expires - server_now then
      redis.call('PEXPIREAT', log, expires)
      if packed then redis.call('PEXPIREAT', state, expires) end
    end
    renewed = renewed + 1
  end
end
return renewed
