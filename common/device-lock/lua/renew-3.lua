--[[
  Extend the lease of a grant, all devices or none, only while the caller still holds every
  device with the grant's tokens.

  KEYS[1] leases zset, KEYS[2] timeline stream, KEYS[3] waiter records
  ARGV[1] key base, ARGV[2] timeline MAXLEN
  ARGV[3] lease ms from now
  ARGV[4..] device, token, device, token, ...

  Returns {0, leaseUntil} renewed
          {-3, lostJson} lock lost: JSON array of {d: device, r: reason}, r = how our hold ended
                         ("lapsed" | "revoked" | "released"), "superseded" (a newer hold came and
                         went since) or "wiped" (Redis lost the device's state and nobody was
                         granted it since); nothing was extended; lapsed devices are already handed over.
]]
--- @include "lock-core"

local now = nowMs()
trimTimeline() -- periodic caller: keeps the timeline near its cap
local devs, tokens = {}, {}
for i = 4, #ARGV, 2 do
  devs[#devs + 1] = ARGV[i]
  tokens[#tokens + 1] = ARGV[i + 1]
end
-- Every script ends lapsed leases first: a lease that ran out is lost even if nobody wants it.
local ended = expireLeases()
local lost = {}
for i, dev in ipairs(devs) do
  local cur = lockState(dev)
  local mine = tonumber(tokens[i])
  if not cur.held or cur.token ~= mine then
    -- Our hold was the last one ended: say how; otherwise a newer grant came and went since.
    -- A device without a token was never granted since Redis lost its data (the field is never
    -- deleted otherwise): "wiped", which a holder may take again if nobody else has.
    local reason = 'superseded'
    if cur.token == nil then reason = 'wiped'
    elseif cur.endedToken == mine then reason = cur.endReason end
    lost[#lost + 1] = { d = dev, r = reason }
  end
end
if #lost > 0 then
  if ended > 0 then grantPass(nil, true) end
  return finish(-3, cjson.encode(lost))
end
local leaseUntil = int(now + tonumber(ARGV[3]))
local zargs = {}
for _, dev in ipairs(devs) do
  redis.call('HSET', devKey(dev), 'leaseUntil', leaseUntil)
  zargs[#zargs + 1] = leaseUntil
  zargs[#zargs + 1] = dev
end
redis.call('ZADD', leasesKey, unpack(zargs))
if ended > 0 then grantPass(nil, true) end
return finish(0, leaseUntil)
