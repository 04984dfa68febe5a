-- When a key's state may go, on the server's clock, by which Redis counts expiry down: read by
-- every script of RedissonRateLimitStore, which sends it before the script's own text.
--
-- With the server's time (TIME, the default), a key's time is the latest of the server's clock
-- and the times its calls were decided at, so never behind the server's clock: a state is kept
-- until the server's clock reaches its end in the key's time, whatever that time did meanwhile (a
-- clock set back leaves the key's time ahead, and its state with it). With a client's clock,
-- which may run slow, stand still or be set, the key's time says nothing of the server's clock: a
-- state is kept for as long as it still matters, counted on the server's clock from its last
-- change, and at least CLIENT_CLOCK_KEEP ms, so that a clock standing still keeps it. Decisions
-- follow the key's time, never expiry.

local CLIENT_CLOCK_KEEP = 600000

-- The server's clock, in epoch ms.
local function server_clock()
  local time = redis.call('TIME')
  return time[1] * 1000 + math.floor(time[2] / 1000)
end

-- The server's time after which a state may go that matters for keep more ms of its key's time,
-- now key_now; client_clock: whether that time is a client's. Rounded up to the next 1,024 ms,
-- so that a state whose end moves with every call is given a later expiry about once a second.
local function expires_at(key_now, keep, server_now, client_clock)
  local at = key_now + keep
  if client_clock then at = server_now + math.max(keep, CLIENT_CLOCK_KEEP) end
  return at + (-at) % 1024
end

