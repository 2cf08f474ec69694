--[[
  End everything one holder has in the lock: its holds (reason "revoked") and its waiters (woken
  with a cancel marker), then hand the freed devices on. For a holder known dead (a worker daemon
  saw its job process exit): its leases would lapse and its waiters expire by themselves, a lease
  and a waiter TTL later, and a waiter granted meanwhile held its devices for one more lease.

  KEYS[1] leases zset, KEYS[2] timeline stream, KEYS[3] waiter records
  ARGV[1] key base, ARGV[2] timeline MAXLEN
  ARGV[3] holder

  Returns {0, "[holds ended, waiters dropped]"}
]]
--- @include "lock-core"

nowMs()
local holder = ARGV[3]
-- A lease that lapsed before this call ends as "lapsed", as release does.
expireLeases()
local rows = {}
for _, dev in ipairs(redis.call('ZRANGE', leasesKey, 0, -1)) do
  local r = readHold(dev)
  if r and r.holder == holder then rows[#rows + 1] = r end
end
local dropped = 0
local all = redis.call('HGETALL', waiterDataKey)
for i = 1, #all, 2 do
  local id, raw = all[i], all[i + 1]
  local w = waiterOf(id, raw)
  if w.holder == holder then
    dropWaiter(id)
    redis.call('LPUSH', wakeKey(id), 'c')
    redis.call('PEXPIRE', wakeKey(id), w.ttl)
    dropped = dropped + 1
  end
end
endHolds(rows, 'revoked')
grantPass(nil, true)
return finish(0, cjson.encode({ #rows, dropped }))
