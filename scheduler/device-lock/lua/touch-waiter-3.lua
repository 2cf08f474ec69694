--[[
  Heartbeat of a live waiter: refresh its expiry, then run a grant pass (which also ends lapsed
  leases, so waiting processes detect lapses even when no sweeper runs).

  KEYS[1] waiters zset, KEYS[2] leases zset, KEYS[3] timeline stream
  ARGV[1] key base, ARGV[2] timeline MAXLEN
  ARGV[3] waiter id

  Returns {1, ""} still waiting (or granted by this pass: the grant is on its wake list)
          {0, ""} not waiting, but its wake list holds a message (grant or cancel marker)
          {-4, ""} gone: dropped as stale (expired before this heartbeat); "x" is pushed onto
                   its wake list so that the waiter's BLPOP (which has no timeout) ends
]]
--- @include "lock-core"

local now = nowMs()
local id = ARGV[3]
local ttl = redis.call('HGET', waiterKey(id), 'ttl')
if not ttl then
  if redis.call('LLEN', wakeKey(id)) > 0 then return { 0, '' } end
  redis.call('LPUSH', wakeKey(id), 'x')
  redis.call('PEXPIRE', wakeKey(id), 60000)
  return { -4, '' }
end
-- Refresh first, so this pass does not drop the waiter it is keeping alive.
local exp = tonumber(redis.call('HGET', waiterKey(id), 'exp'))
if exp >= now then
  redis.call('HSET', waiterKey(id), 'exp', now + tonumber(ttl))
  redis.call('PEXPIRE', waiterKey(id), tonumber(ttl) * 2)
end
grantPass(now, nil)
if redis.call('EXISTS', waiterKey(id)) == 0 and redis.call('LLEN', wakeKey(id)) == 0 then
  redis.call('LPUSH', wakeKey(id), 'x')
  redis.call('PEXPIRE', wakeKey(id), tonumber(ttl))
  return { -4, '' }
end
return { 1, '' }
