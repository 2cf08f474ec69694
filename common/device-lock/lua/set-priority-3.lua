--[[
  Reorder a live waiter (the scheduler's priority and data-readiness changed), then run a grant
  pass: a waiter moved ahead of the one blocking it may become grantable.

  KEYS[1] leases zset, KEYS[2] timeline stream, KEYS[3] waiter records
  ARGV[1] key base, ARGV[2] timeline MAXLEN
  ARGV[3] waiter id, ARGV[4] priority, ARGV[5] readiness

  Returns {0, ""} updated
          {-4, ""} no such live waiter
]]
--- @include "lock-core"

nowMs()
local id = ARGV[3]
local rec = redis.call('HGET', waiterDataKey, id)
if not rec then return finish(-4, '') end
-- A fresh table: cached records are never changed in place.
local w = cjson.decode(rec)
w.prio = tonumber(ARGV[4])
w.ready = tonumber(ARGV[5])
redis.call('HSET', waiterDataKey, id, encodeWaiter(w))
grantPass(nil)
return finish(0, '')
