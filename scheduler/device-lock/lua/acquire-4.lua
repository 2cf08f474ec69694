--[[
  Enqueue a waiter for a group of devices and run a grant pass; all devices or none.

  KEYS[1] waiters zset, KEYS[2] leases zset, KEYS[3] timeline stream, KEYS[4] arrival counter
  ARGV[1] key base, ARGV[2] timeline MAXLEN
  ARGV[3] waiter id (unique among live waiters)
  ARGV[4] devices, JSON array of ids (distinct, non-empty; checked by the caller)
  ARGV[5] job, ARGV[6] stage, ARGV[7] holder
  ARGV[8] priority (higher first), ARGV[9] readiness (higher first)
  ARGV[10] lease ms, ARGV[11] waiter ttl ms (the waiter refreshes it while it waits)
  ARGV[12] mode: "wait" keeps the waiter queued, "try" removes it when not granted at once

  Returns {1, grantJson} granted now
          {0, ""} queued: the grant will arrive on "<base>wake:<id>" as "g<grantJson>"
          {-1, ""} a live waiter with this id exists
          {-2, ""} mode "try" and not grantable now
]]
--- @include "lock-core"

local now = nowMs()
local id = ARGV[3]
local ttl = tonumber(ARGV[11])
if redis.call('EXISTS', waiterKey(id)) == 1 then return { -1, '' } end
redis.call('DEL', wakeKey(id))
local seq = redis.call('INCR', KEYS[4])
redis.call('HSET', waiterKey(id), 'devs', ARGV[4], 'job', ARGV[5], 'stage', ARGV[6],
  'holder', ARGV[7], 'prio', ARGV[8], 'ready', ARGV[9], 'lease', ARGV[10], 'ttl', ttl,
  'seq', seq, 'exp', now + ttl, 'since', now)
-- Safety net only: grant passes drop expired waiters; this frees memory if none ever runs.
redis.call('PEXPIRE', waiterKey(id), ttl * 2)
redis.call('ZADD', waitersKey, seq, id)

local g = grantPass(now, id)
if g then return { 1, g } end
if ARGV[12] == 'try' then
  dropWaiter(id)
  -- This waiter reserved its devices during the pass; lower waiters may be grantable without it.
  grantPass(now, nil)
  return { -2, '' }
end
return { 0, '' }
