--[[
  Remove a waiter that is still waiting (timeout, abort) and wake its BLPOP with a cancel marker.
  Its reservation disappears, so a grant pass runs for the waiters behind it.

  KEYS[1] leases zset, KEYS[2] timeline stream, KEYS[3] waiter records
  ARGV[1] key base, ARGV[2] timeline MAXLEN
  ARGV[3] waiter id

  Returns {1, ""} removed; "c" pushed onto its wake list
          {0, ""} not waiting any more (granted: the grant is on its wake list; or dropped)
]]
--- @include "lock-core"

nowMs()
local id = ARGV[3]
local rec = redis.call('HGET', waiterDataKey, id)
if not rec then return finish(0, '') end
dropWaiter(id)
redis.call('LPUSH', wakeKey(id), 'c')
redis.call('PEXPIRE', wakeKey(id), cjson.decode(rec).ttl)
grantPass(nil)
return finish(1, '')
