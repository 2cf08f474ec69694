--[[
  Enqueue a waiter for a group of devices and run a grant pass; all devices or none.

  KEYS[1] leases zset, KEYS[2] timeline stream, KEYS[3] waiter records, KEYS[4] arrival counter
  ARGV[1] key base, ARGV[2] timeline MAXLEN
  ARGV[3] waiter id (unique among live waiters)
  ARGV[4] waiter record, JSON object {devs, job, stage, holder, prio, ready, lease, ttl,
          reclaim?, grace} with devs distinct and non-empty (checked by the caller); this script
          drops grace (ms: the grace this request starts if the lock's state was lost, see
          lock-core) and appends since, seq, exp
  ARGV[5] mode: "wait" keeps the waiter queued, "try" removes it when not granted at once

  Returns {1, grantJson} granted now: {w, d: devices, t: tokens, u: leaseUntil, a: grantedAt}
          {0, ""} queued: the grant will arrive on "<base>wake:<id>" as "g<grantJson>"
          {-1, ""} a live waiter with this id exists
          {-2, ""} mode "try" and not grantable now
]]
--- @include "lock-core"

local now = nowMs()
local id = ARGV[3]
local w = cjson.decode(ARGV[4])
w.id = id
-- No grace key: Redis lost the lock's state (or nobody declared the prefix fresh). Holders of
-- before may still use their devices; those without a token wait for the grace to end.
if redis.call('SET', base .. 'grace', int(now + w.grace), 'NX') then graceUntil = now + w.grace end
w.grace = nil
expireLeases()

-- Fast path: nobody waits and every device is free, so the policy grants this request at once
-- without queueing it.
if redis.call('HLEN', waiterDataKey) == 0 then
  local last = grantable(w, {})
  if last then return finish(1, grantDevices(w, last)) end
  if ARGV[5] == 'try' then return finish(-2, '') end
end

if redis.call('HEXISTS', waiterDataKey, id) == 1 then return finish(-1, '') end
redis.call('DEL', wakeKey(id))
local seq = redis.call('INCR', KEYS[4])
w.since, w.seq, w.exp = now, seq, now + w.ttl
local rec = encodeWaiter(w)
redis.call('HSET', waiterDataKey, id, rec)
-- The record as the grant pass will read it: decoded here already.
cacheWaiter(id, rec, w)

local g = grantPass(id, true)
if g then return finish(1, g) end
if ARGV[5] == 'try' then
  dropWaiter(id)
  -- This waiter reserved its devices during the pass; lower waiters may be grantable without it.
  grantPass(nil, true)
  return finish(-2, '')
end
return finish(0, '')
