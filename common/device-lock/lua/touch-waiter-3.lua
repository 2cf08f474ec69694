--[[
  Heartbeat of a live waiter: push its expiry to now + ttl, then run a grant pass (which also
  ends lapsed leases, so waiting processes detect lapses even when no sweeper runs).

  KEYS[1] leases zset, KEYS[2] timeline stream, KEYS[3] waiter records
  ARGV[1] key base, ARGV[2] timeline MAXLEN
  ARGV[3] waiter id, ARGV[4] ttl ms

  Returns {1, ""} still waiting (or granted by this pass: the grant is on its wake list)
          {0, ""} not waiting, but its wake list holds a message (grant or cancel marker)
          {-4, ""} gone: dropped as stale (it expired before this heartbeat); "x" is pushed onto
                   its wake list so that the waiter's BLPOP (which has no timeout) ends
]]
--- @include "lock-core"

local now = nowMs()
trimTimeline() -- periodic caller: keeps the timeline near its cap
local id = ARGV[3]
local ttl = tonumber(ARGV[4])
local rec = redis.call('HGET', waiterDataKey, id)
-- Refresh only a live entry: an expired one is gone even if no pass has dropped it yet.
if rec then
  local w = waiterOf(id, rec)
  if w.exp >= now then
    w.exp = now + ttl
    rec = encodeWaiter(w)
    redis.call('HSET', waiterDataKey, id, rec)
    cacheWaiter(id, rec, w)
  end
end
grantPass(nil)
if redis.call('HEXISTS', waiterDataKey, id) == 1 then return finish(1, '') end
if redis.call('LLEN', wakeKey(id)) > 0 then return finish(0, '') end
redis.call('LPUSH', wakeKey(id), 'x')
redis.call('PEXPIRE', wakeKey(id), ttl)
return finish(-4, '')
