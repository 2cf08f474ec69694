--[[
  Shared core of every device-lock script; the loader pastes it where a script says
  `--- @include "lock-core"`. It is the only code that grants, ends or hands over a lock, so
  the invariants below hold for every script:

  - A device is held iff its hash has a non-empty `holder`; `token` is never deleted and each
    grant writes token+1, so the fencing token of a device only grows.
  - Every grant and every end writes a timeline entry (one per grant: all its devices, JSON
    arrays `d` and `t`) inside the same script, so the stream order is the serialisation order
    of lock ownership.
  - A lease lapses when leaseUntil < now (Redis server time, `TIME`). Every script first ends
    lapsed leases, so a lapsed holder can never renew or release after the fact.
  - Waiter policy (grantPass): waiters sorted by priority desc, readiness desc, arrival asc.
    A waiter is granted iff all its devices are free AND none is wanted by a waiter ahead of it
    that is still blocked (it "reserves" its whole set). Lower-priority work may backfill devices
    no higher waiter wants, but never delays a higher waiter: wide groups cannot starve.

  Expects KEYS[1] waiters zset (member waiter id, score its expiry ms), KEYS[2] leases zset
  (member device, score leaseUntil ms), KEYS[3] timeline stream, KEYS[4] waiter records hash
  (field waiter id, value JSON {devs, job, stage, holder, prio, ready, lease, ttl, since, seq});
  ARGV[1] key base ("<prefix>lock:"), ARGV[2] timeline MAXLEN (approximate trim, applied by
  renew, touch-waiter and expire-lapsed).
]]
local waitersKey = KEYS[1]
local leasesKey = KEYS[2]
local timelineKey = KEYS[3]
local waiterDataKey = KEYS[4]
local base = ARGV[1]
local timelineMax = ARGV[2]
local stats = { lapsed = 0, dropped = 0, granted = 0 }
-- Ends are written lazily: endHolds logs the end at once but leaves the device hash and the
-- lease entry to finish(). When this same script grants the device again, the end fields ride
-- on the grant's HSET and its ZADD replaces the lease entry (three calls fewer per handoff).
-- Until finish(), `pending` (device -> {token, reason}) is the truth for these devices, and
-- every script must return through finish().
local pending, pendingOrder = {}, {}

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function devKey(d) return base .. 'dev:' .. d end
local function wakeKey(w) return base .. 'wake:' .. w end

-- Timeline entries of both kinds carry the same fields in the same order, so the stream stores
-- field names once per node (listpack "same fields" entries). No MAXLEN here: trimming is left
-- to the periodic scripts (renew, heartbeat, sweeper) via trimTimeline, off the handoff path.
local function log(kind, devs, tokens, holder, job, stage, waiter, start, stop, reason)
  redis.call('XADD', timelineKey, '*', 'e', kind, 'd', devs, 't', tokens, 'h', holder, 'j', job,
    's', stage, 'w', waiter, 'a', start, 'b', stop, 'r', reason)
end

local function trimTimeline()
  redis.call('XTRIM', timelineKey, 'MAXLEN', '~', timelineMax)
end

-- The current hold of a device, or nil when free (holder absent or '').
local function readHold(dev)
  if pending[dev] then return nil end
  local h = redis.call('HMGET', devKey(dev), 'holder', 'job', 'stage', 'token', 'grantedAt', 'waiter')
  if not h[1] or h[1] == '' then return nil end
  return { dev = dev, holder = h[1], job = h[2], stage = h[3], token = tonumber(h[4]),
    grantedAt = h[5], waiter = h[6] }
end

-- Last token issued for dev if it is free, nil if held. The grant that follows writes token+1
-- in the same script, so reading it here saves an HINCRBY.
local function freeToken(dev)
  local e = pending[dev]
  if e then return e.token end
  local h = redis.call('HMGET', devKey(dev), 'holder', 'token')
  if h[1] and h[1] ~= '' then return nil end
  return tonumber(h[2]) or 0
end

-- Ends holds (rows from readHold) with reason released | lapsed | revoked: one timeline entry
-- per grant (devices of one grant end together); the device writes wait for finish().
local function endHolds(rows, reason, now)
  if #rows == 0 then return end
  local groups, order = {}, {}
  for _, r in ipairs(rows) do
    pending[r.dev] = { token = r.token, reason = reason }
    pendingOrder[#pendingOrder + 1] = r.dev
    local g = groups[r.waiter]
    if not g then
      g = { r = r, d = {}, t = {} }
      groups[r.waiter] = g
      order[#order + 1] = r.waiter
    end
    g.d[#g.d + 1] = r.dev
    g.t[#g.t + 1] = r.token
  end
  for _, w in ipairs(order) do
    local g = groups[w]
    log('end', cjson.encode(g.d), '[' .. table.concat(g.t, ',') .. ']', g.r.holder, g.r.job,
      g.r.stage, w, g.r.grantedAt, now, reason)
    if reason ~= 'released' then
      -- Wake lists of grants carry no expiry (one call fewer per handoff). A holder that died
      -- before reading its grant never renews: drop that unread grant when its hold ends.
      local m = redis.call('LINDEX', wakeKey(w), 0)
      local tail = ',"a":' .. g.r.grantedAt .. '}'
      if m and string.sub(m, -#tail) == tail then redis.call('DEL', wakeKey(w)) end
    end
  end
end

-- What renew needs to know of a device, pending ends included.
local function lockState(dev)
  local e = pending[dev]
  if e then return { held = false, token = e.token, endedToken = e.token, endReason = e.reason } end
  local h = redis.call('HMGET', devKey(dev), 'holder', 'token', 'endedToken', 'endReason')
  return { held = h[1] and h[1] ~= '', token = tonumber(h[2]), endedToken = tonumber(h[3]),
    endReason = h[4] }
end

-- Writes the pending ends no grant took over; every script returns through this.
local function finish(code, payload)
  local devs = {}
  for _, dev in ipairs(pendingOrder) do
    local e = pending[dev]
    if e then
      -- endedToken/endReason let a late renew tell its holder why its hold ended.
      redis.call('HSET', devKey(dev), 'holder', '', 'leaseUntil', '', 'endedToken', e.token,
        'endReason', e.reason)
      devs[#devs + 1] = dev
      pending[dev] = nil
    end
  end
  pendingOrder = {}
  if #devs > 0 then redis.call('ZREM', leasesKey, unpack(devs)) end
  return { code, payload }
end

local function expireLeases(now)
  local lapsed = redis.call('ZRANGEBYSCORE', leasesKey, '-inf', '(' .. now)
  local rows = {}
  for _, dev in ipairs(lapsed) do
    local r = readHold(dev)
    if r then rows[#rows + 1] = r else redis.call('ZREM', leasesKey, dev) end
  end
  endHolds(rows, 'lapsed', now)
  stats.lapsed = stats.lapsed + #rows
  return #lapsed
end

local function dropWaiter(id)
  redis.call('HDEL', waiterDataKey, id)
  redis.call('ZREM', waitersKey, id)
end

-- Grants every device of waiter w at once (last[i] = freeToken(w.devs[i]), all free); returns
-- the grant as JSON for the waiter.
local function grantDevices(w, last, now)
  local leaseUntil = now + w.lease
  local tokens, zargs = {}, {}
  for i, dev in ipairs(w.devs) do
    tokens[i] = last[i] + 1
    local e = pending[dev]
    if e then pending[dev] = nil end -- held again: later waiters in this pass must see the holder
    if e and e.reason ~= 'released' then
      -- The end of a lapsed or revoked hold is written with the grant, so that the late renew of
      -- the old holder still learns why it lost the device. (After a release nobody asks.)
      redis.call('HSET', devKey(dev), 'token', tokens[i], 'holder', w.holder, 'job', w.job,
        'stage', w.stage, 'leaseUntil', leaseUntil, 'grantedAt', now, 'waiter', w.id,
        'endedToken', e.token, 'endReason', e.reason)
    else
      redis.call('HSET', devKey(dev), 'token', tokens[i], 'holder', w.holder, 'job', w.job,
        'stage', w.stage, 'leaseUntil', leaseUntil, 'grantedAt', now, 'waiter', w.id)
    end
    zargs[#zargs + 1] = leaseUntil
    zargs[#zargs + 1] = dev
  end
  redis.call('ZADD', leasesKey, unpack(zargs))
  local d, t = cjson.encode(w.devs), '[' .. table.concat(tokens, ',') .. ']'
  log('grant', d, t, w.holder, w.job, w.stage, w.id, now, '', '')
  stats.granted = stats.granted + 1
  return '{"w":' .. cjson.encode(w.id) .. ',"d":' .. d .. ',"t":' .. t .. ',"u":' .. leaseUntil ..
    ',"a":' .. now .. '}'
end

-- Tokens of w's devices if all are free and none is in `reserved`, else nil.
local function grantable(w, reserved)
  local last = {}
  for i, dev in ipairs(w.devs) do
    if reserved[dev] then return nil end
    last[i] = freeToken(dev)
    if not last[i] then return nil end
  end
  return last
end

-- Live waiters in grant order; first drops waiters whose expiry passed (their process is gone).
local function loadWaiters(now)
  local flat = redis.call('ZRANGE', waitersKey, 0, -1, 'WITHSCORES')
  if #flat == 0 then return flat end
  local ids, stale = {}, {}
  for i = 1, #flat, 2 do
    if tonumber(flat[i + 1]) < now then stale[#stale + 1] = flat[i] else ids[#ids + 1] = flat[i] end
  end
  if #stale > 0 then
    redis.call('HDEL', waiterDataKey, unpack(stale))
    redis.call('ZREM', waitersKey, unpack(stale))
    stats.dropped = stats.dropped + #stale
  end
  local list = {}
  if #ids == 0 then return list end
  local recs = redis.call('HMGET', waiterDataKey, unpack(ids))
  for i, id in ipairs(ids) do
    if recs[i] then
      local w = cjson.decode(recs[i])
      w.id = id
      list[#list + 1] = w
    else
      redis.call('ZREM', waitersKey, id)
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
-- Pass skipExpire when the calling script already ended lapsed leases at this `now`.
local function grantPass(now, selfId, skipExpire)
  if not skipExpire then expireLeases(now) end
  local reserved = {}
  local selfGrant = nil
  for _, w in ipairs(loadWaiters(now)) do
    local last = grantable(w, reserved)
    if last then
      local payload = grantDevices(w, last, now)
      dropWaiter(w.id)
      if w.id == selfId then
        selfGrant = payload
      else
        -- BLPOP empties (deletes) the list at once; if the waiter died meanwhile, endHolds
        -- drops the unread grant when its lease lapses.
        redis.call('LPUSH', wakeKey(w.id), 'g' .. payload)
      end
    else
      for _, dev in ipairs(w.devs) do reserved[dev] = true end
    end
  end
  return selfGrant
end
