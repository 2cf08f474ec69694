--[[
  Sweeper: end every lapsed lease (reason "lapsed"), drop expired waiters, grant what the policy
  allows. Idempotent; any process may call it periodically.

  KEYS[1] leases zset, KEYS[2] timeline stream, KEYS[3] waiter records
  ARGV[1] key base, ARGV[2] timeline MAXLEN

  Returns {0, statsJson}: {lapsed, dropped, granted} counts of this call.
]]
--- @include "lock-core"

nowMs()
trimTimeline() -- periodic caller: keeps the timeline near its cap
grantPass(nil)
return finish(0, cjson.encode({ lapsed = lapsedN, dropped = droppedN, granted = grantedN }))
