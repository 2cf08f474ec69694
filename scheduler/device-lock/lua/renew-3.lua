--[[
  Extend the lease of a grant, all devices or none, only while the caller still holds every
  device with the grant's tokens.

  KEYS[1] waiters zset, KEYS[2] leases zset, KEYS[3] timeline stream
  ARGV[1] key base, ARGV[2] timeline MAXLEN
  ARGV[3] devices, JSON array; ARGV[4] fencing tokens, JSON array parallel to ARGV[3]
  ARGV[5] lease ms from now

  Returns {0, leaseUntil} renewed
          {-3, lostJson} lock lost: JSON array of {d: device, r: "lapsed" | "revoked"}; nothing
                         was extended, and lapsed devices are already ended and handed over.
]]
--- @include "lock-core"

local now = nowMs()
local devs = cjson.decode(ARGV[3])
local tokens = cjson.decode(ARGV[4])
-- Which of our devices lapsed, before expireLeases ends them and erases the evidence.
local lapsedNow = {}
for i, dev in ipairs(devs) do
  local cur = redis.call('HMGET', devKey(dev), 'token', 'leaseUntil')
  if cur[2] and tonumber(cur[1]) == tonumber(tokens[i]) and tonumber(cur[2]) < now then
    lapsedNow[dev] = true
  end
end
local ended = expireLeases(now)
local lost = {}
for i, dev in ipairs(devs) do
  local cur = redis.call('HMGET', devKey(dev), 'holder', 'token')
  if not cur[1] or tonumber(cur[2]) ~= tonumber(tokens[i]) then
    lost[#lost + 1] = { d = dev, r = lapsedNow[dev] and 'lapsed' or 'revoked' }
  end
end
if #lost > 0 then
  if ended > 0 then grantPass(now, nil) end
  return { -3, cjson.encode(lost) }
end
local leaseUntil = now + tonumber(ARGV[5])
for _, dev in ipairs(devs) do
  redis.call('HSET', devKey(dev), 'leaseUntil', leaseUntil)
  redis.call('ZADD', leasesKey, leaseUntil, dev)
end
if ended > 0 then grantPass(now, nil) end
return { 0, leaseUntil }
