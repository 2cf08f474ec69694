--[[
  Shared core of every device-lock script; the loader pastes it where a script says
  `--- @include "lock-core"`. It is the only code that grants, ends or hands over a lock, so
  the invariants below hold for every script:

  - A device is held iff its hash has a `holder` field; `token` is never deleted, so the fencing
    token of a device only grows (HINCRBY at each grant).
  - Every grant and every end writes one timeline entry per device, inside the same script, so
    the stream order is the serialisation order of lock ownership.
  - A lease lapses when leaseUntil < now (Redis server time, `TIME`). Every script first ends
    lapsed leases, so a lapsed holder can never renew or release after the fact.
  - Waiter policy (grantPass): waiters sorted by priority desc, readiness desc, arrival asc.
    A waiter is granted iff all its devices are free AND none is wanted by a waiter ahead of it
    that is still blocked (it "reserves" its whole set). Lower-priority work may backfill devices
    no higher waiter wants, but never delays a higher waiter: wide groups cannot starve.

  Expects KEYS[1] waiters zset (member waiter id, score arrival seq), KEYS[2] leases zset
  (member device, score leaseUntil ms), KEYS[3] timeline stream; ARGV[1] key base
  ("<prefix>lock:"), ARGV[2] timeline MAXLEN (approximate trim).
]]
local waitersKey = KEYS[1]
local leasesKey = KEYS[2]
local timelineKey = KEYS[3]
local base = ARGV[1]
local timelineMax = ARGV[2]
local stats = { lapsed = 0, dropped = 0, granted = 0 }

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function devKey(d) return base .. 'dev:' .. d end
local function waiterKey(w) return base .. 'waiter:' .. w end
local function wakeKey(w) return base .. 'wake:' .. w end

local function log(...)
  redis.call('XADD', timelineKey, 'MAXLEN', '~', timelineMax, '*', ...)
end

-- Ends the current holder's interval on one device (reason: released | lapsed | revoked).
local function endLock(dev, reason, now)
  local k = devKey(dev)
  local h = redis.call('HMGET', k, 'holder', 'job', 'stage', 'token', 'grantedAt', 'waiter')
  if not h[1] then return false end
  redis.call('HDEL', k, 'holder', 'job', 'stage', 'leaseUntil', 'grantedAt', 'waiter')
  -- Lets a late renew tell its holder why its hold ended.
  redis.call('HSET', k, 'endedToken', h[4], 'endReason', reason)
  redis.call('ZREM', leasesKey, dev)
  log('e', 'end', 'd', dev, 'h', h[1], 'j', h[2], 's', h[3], 't', h[4], 'a', h[5], 'b', now,
    'r', reason, 'w', h[6])
  return true
end

local function expireLeases(now)
  local lapsed = redis.call('ZRANGEBYSCORE', leasesKey, '-inf', '(' .. now)
  for _, dev in ipairs(lapsed) do
    if endLock(dev, 'lapsed', now) then stats.lapsed = stats.lapsed + 1 end
  end
  return #lapsed
end

local function dropWaiter(id)
  redis.call('DEL', waiterKey(id))
  redis.call('ZREM', waitersKey, id)
end

-- Grants every device of waiter w at once; returns the grant as JSON for the waiter.
local function grantDevices(w, now)
  local leaseUntil = now + w.lease
  local tokens = {}
  for i, dev in ipairs(w.devs) do
    local k = devKey(dev)
    local tok = redis.call('HINCRBY', k, 'token', 1)
    redis.call('HSET', k, 'holder', w.holder, 'job', w.job, 'stage', w.stage,
      'leaseUntil', leaseUntil, 'grantedAt', now, 'waiter', w.id)
    redis.call('ZADD', leasesKey, leaseUntil, dev)
    log('e', 'grant', 'd', dev, 'h', w.holder, 'j', w.job, 's', w.stage, 't', tok, 'a', now,
      'w', w.id)
    tokens[i] = tok
  end
  stats.granted = stats.granted + 1
  return cjson.encode({ w = w.id, d = w.devs, t = tokens, u = leaseUntil, a = now })
end

-- Live waiters in grant order; drops waiters whose own expiry passed (their process is gone).
local function loadWaiters(now)
  local ids = redis.call('ZRANGE', waitersKey, 0, -1)
  local list = {}
  for _, id in ipairs(ids) do
    local f = redis.call('HMGET', waiterKey(id), 'devs', 'prio', 'ready', 'seq', 'exp', 'job',
      'stage', 'holder', 'lease', 'ttl')
    if not f[1] or tonumber(f[5]) < now then
      dropWaiter(id)
      stats.dropped = stats.dropped + 1
    else
      list[#list + 1] = { id = id, devs = cjson.decode(f[1]), prio = tonumber(f[2]),
        ready = tonumber(f[3]), seq = tonumber(f[4]), job = f[6], stage = f[7], holder = f[8],
        lease = tonumber(f[9]), ttl = tonumber(f[10]) }
    end
  end
  table.sort(list, function(a, b)
    if a.prio ~= b.prio then return a.prio > b.prio end
    if a.ready ~= b.ready then return a.ready > b.ready end
    return a.seq < b.seq
  end)
  return list
end

-- Ends lapsed leases, then grants every waiter the policy allows. A grant to selfId is returned
-- (the caller replies with it); any other grant is pushed onto that waiter's wake list.
local function grantPass(now, selfId)
  expireLeases(now)
  if redis.call('ZCARD', waitersKey) == 0 then return nil end
  local reserved = {}
  local selfGrant = nil
  for _, w in ipairs(loadWaiters(now)) do
    local ok = true
    for _, dev in ipairs(w.devs) do
      if reserved[dev] or redis.call('HEXISTS', devKey(dev), 'holder') == 1 then
        ok = false
        break
      end
    end
    if ok then
      local payload = grantDevices(w, now)
      dropWaiter(w.id)
      if w.id == selfId then
        selfGrant = payload
      else
        redis.call('LPUSH', wakeKey(w.id), 'g' .. payload)
        redis.call('PEXPIRE', wakeKey(w.id), w.ttl)
      end
    else
      for _, dev in ipairs(w.devs) do reserved[dev] = true end
    end
  end
  return selfGrant
end
