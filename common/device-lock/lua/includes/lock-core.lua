--[[
  Shared core of every device-lock script. scripts.ts builds one Redis FUNCTION library from
  it: this file is the library's top (run once, at load) and each script file (which says
  `--- @include "lock-core"`) becomes the body of one function that starts with
  begin(KEYS, ARGV). It is the only code that grants, ends or hands over a lock, so the
  invariants below hold for every script:

  - A device is held iff its hash has a non-empty `holder`; `token` is never deleted and each
    grant writes token+1, so the fencing token of a device only grows. A device without a
    `token` (first grant, or Redis lost its data: it keeps nothing on disk) starts from
    TIME in µs (< 2^53 until the year 2255), so a token issued after a wipe is greater than
    any issued before it as long as a device saw fewer grants than µs passed since its
    counter started (one grant per µs: far beyond what a script per grant allows).
  - Every grant and every end writes a timeline record (one per grant: all its devices, JSON
    arrays `d` and `t`) inside the same script, so the stream order is the serialisation order
    of lock ownership. The records of one script run go into one stream entry, in order.
  - A lease lapses when leaseUntil < now (Redis server time, `TIME`). Every script first ends
    lapsed leases, so a lapsed holder can never renew or release after the fact.
  - Grace after a wipe: Redis keeps nothing on disk, so a restart forgets every hold while the
    holders still use their devices. A device without a `token` (never granted since the state
    was lost) is granted only to a waiter that `reclaim`s it (a holder taking back what it held,
    lease-keeper.ts) until the key `grace` says the grace is over: long enough for every holder
    to renew once and find its hold wiped. The first acquire that finds no `grace` key starts
    the grace (its waiter's `grace` ms); a process that knows nothing can hold a device (the
    scheduler at start with no job placed or running) may set it to 0 first (declareFresh).
  - Waiter policy (grantPass): waiters sorted by priority desc, readiness desc, arrival asc.
    A waiter is granted iff all its devices are free AND none is wanted by a waiter ahead of it
    that is still blocked (it "reserves" its whole set). Lower-priority work may backfill devices
    no higher waiter wants, but never delays a higher waiter: wide groups cannot starve.

  Expects KEYS[1] leases zset (member device, score leaseUntil ms), KEYS[2] timeline stream,
  KEYS[3] waiter records hash (field waiter id, value JSON {devs, job, stage, holder, prio,
  ready, lease, ttl, since, seq, exp}, exp = the waiter's expiry in ms, pushed forward by its
  heartbeats; one hash for records and expiries: a grant pass reads every waiter with one
  HGETALL and a grant removes one with one HDEL);
  ARGV[1] key base ("<prefix>lock:"), ARGV[2] timeline MAXLEN (approximate trim, applied by
  renew, touch-waiter and expire-lapsed).

  Cost notes (this is the handoff path, measured on the target VM): each redis.call costs
  1.5-5 µs, and so does Lua work that looks free: a number -> string conversion (sprintf) is
  ~1 µs, a cjson.decode ~2 µs, a new table ~0.5 µs. So times and tokens travel as strings from
  where Redis gives them to where Redis takes them, numbers are formatted once (int()), and the
  per-call scratch tables below live as long as the library and are emptied by begin().
]]
local leasesKey, timelineKey, waiterDataKey, base, timelineMax
-- Counts for expire-lapsed's reply.
local lapsedN, droppedN, grantedN
-- Ends are written lazily: endHolds logs the end at once but leaves the device hash and the
-- lease entry to finish(). When this same script grants the device again, the end fields ride
-- on the grant's HSET and its ZADD replaces the lease entry (three calls fewer per handoff).
-- Until finish(), `pending` (device -> the ended hold, a readHold row with its reason) is the
-- truth for these devices, and every script must return through finish().
local pending, pendingOrder, pendingN = {}, {}, 0
-- Timeline records of this call: XADD arguments 3..logN, written as one entry by finish() (a
-- release that hands over writes its end and the grant with one XADD).
local logArgs, logN = {}, 2
-- Redis server time of this call in ms, as a number and as the string Redis is given; TIME's
-- reply for the token floor.
local now, nowS, time
-- Until when devices without a token are held back (the grace after a wipe): read at most once
-- a call, when a grant meets such a device; false until then.
local graceUntil
-- Decoded waiter records by waiter id, each with the exact stored string it was decoded from
-- (`raw`), so a grant pass decodes a record once in its life, not on every pass (cjson.decode
-- is the dearest step of a handoff's Lua work). A hit needs raw == the string HMGET returned
-- (interned strings: an O(1) compare), so a record rewritten by setPriority, re-queued under the
-- same id or stored by another lock domain (the library serves every prefix) is decoded afresh;
-- entries go with dropWaiter, and the cache is emptied when it outgrows any sane queue (waiters
-- dropped while this library was not loaded).
local waiterCache, waiterCacheN = {}, 0

local function begin(keys, argv)
  leasesKey, timelineKey, waiterDataKey = keys[1], keys[2], keys[3]
  base, timelineMax = argv[1], argv[2]
  lapsedN, droppedN, grantedN = 0, 0, 0
  -- A call that raised an error never reached finish(): start from clean tables then.
  if next(pending) ~= nil then pending = {} end
  pendingN = 0
  logArgs[1], logArgs[2], logN = timelineKey, '*', 2
  graceUntil = false
end

-- Integers as Redis wants them: '%d' is exact up to 2^53 where tostring (%.14g) would switch to
-- an exponent above 10^14.
local function int(n) return string.format('%d', n) end

-- Sets now/nowS (every script calls this first). The ms string is cut from TIME's reply rather
-- than formatted from the number.
local function nowMs()
  local t = redis.call('TIME')
  time = t
  nowS = t[1] .. string.sub('000000' .. t[2], -6, -4)
  now = tonumber(nowS)
  return now
end

local function devKey(d) return base .. 'dev:' .. d end
local function wakeKey(w) return base .. 'wake:' .. w end

-- Records of both kinds carry the same fields in the same order. No MAXLEN here: trimming is
-- left to the periodic scripts (renew, heartbeat, sweeper) via trimTimeline, off the handoff path.
local function log(kind, devs, tokens, holder, job, stage, waiter, start, stop, reason)
  local n = logN
  logArgs[n + 1], logArgs[n + 2], logArgs[n + 3], logArgs[n + 4] = 'e', kind, 'd', devs
  logArgs[n + 5], logArgs[n + 6], logArgs[n + 7], logArgs[n + 8] = 't', tokens, 'h', holder
  logArgs[n + 9], logArgs[n + 10], logArgs[n + 11], logArgs[n + 12] = 'j', job, 's', stage
  logArgs[n + 13], logArgs[n + 14], logArgs[n + 15], logArgs[n + 16] = 'w', waiter, 'a', start
  logArgs[n + 17], logArgs[n + 18], logArgs[n + 19], logArgs[n + 20] = 'b', stop, 'r', reason
  logN = n + 20
end

local function trimTimeline()
  redis.call('XTRIM', timelineKey, 'MAXLEN', '~', timelineMax)
end

-- The current hold of a device, or nil when free (holder absent or '').
local function readHold(dev)
  if pending[dev] then return nil end
  local h = redis.call('HMGET', devKey(dev), 'holder', 'job', 'stage', 'token', 'grantedAt', 'waiter')
  if not h[1] or h[1] == '' then return nil end
  return { dev = dev, holder = h[1], job = h[2], stage = h[3], token = tonumber(h[4]), tokenS = h[4],
    grantedAt = h[5], waiter = h[6] }
end

-- Last token issued for dev if it is free, nil if held. The grant that follows writes token+1
-- in the same script, so reading it here saves an HINCRBY. No token yet: the time floor (see
-- the invariants above), and true as the second value.
local function freeToken(dev)
  local e = pending[dev]
  if e then return e.token end
  local h = redis.call('HMGET', devKey(dev), 'holder', 'token')
  if h[1] and h[1] ~= '' then return nil end
  local t = tonumber(h[2])
  if t then return t end
  return tonumber(time[1]) * 1000000 + tonumber(time[2]), true
end

-- Whether devices without a token are still held back (see the grace invariant above).
local function inGrace()
  if graceUntil == false then graceUntil = tonumber(redis.call('GET', base .. 'grace')) or 0 end
  return now < graceUntil
end

-- Ends holds (rows from readHold) with reason released | lapsed | revoked: one timeline record
-- per grant (devices of one grant end together); the device writes wait for finish().
local function endHolds(rows, reason)
  if #rows == 0 then return end
  local first = rows[1]
  local oneGroup = true
  for _, r in ipairs(rows) do
    r.reason = reason
    pending[r.dev] = r
    pendingN = pendingN + 1
    pendingOrder[pendingN] = r.dev
    if r.waiter ~= first.waiter then oneGroup = false end
  end
  if oneGroup and reason == 'released' then
    -- A release: all rows are one grant's (the common case), no grouping tables needed.
    local d, t = {}, {}
    for i, r in ipairs(rows) do d[i], t[i] = r.dev, r.tokenS end
    log('end', cjson.encode(d), '[' .. table.concat(t, ',') .. ']', first.holder, first.job,
      first.stage, first.waiter, first.grantedAt, nowS, reason)
    return
  end
  local groups, order = {}, {}
  for _, r in ipairs(rows) do
    local g = groups[r.waiter]
    if not g then
      g = { r = r, d = {}, t = {} }
      groups[r.waiter] = g
      order[#order + 1] = r.waiter
    end
    g.d[#g.d + 1] = r.dev
    g.t[#g.t + 1] = r.tokenS
  end
  for _, w in ipairs(order) do
    local g = groups[w]
    log('end', cjson.encode(g.d), '[' .. table.concat(g.t, ',') .. ']', g.r.holder, g.r.job,
      g.r.stage, w, g.r.grantedAt, nowS, reason)
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

-- Writes the pending ends no grant took over and this call's timeline records; every script
-- returns through this.
local function finish(code, payload)
  local devs
  for i = 1, pendingN do
    local dev = pendingOrder[i]
    local e = pending[dev]
    if e then
      -- endedToken/endReason let a late renew tell its holder why its hold ended.
      redis.call('HSET', devKey(dev), 'holder', '', 'leaseUntil', '', 'endedToken', e.tokenS,
        'endReason', e.reason)
      devs = devs or {}
      devs[#devs + 1] = dev
      pending[dev] = nil
    end
  end
  pendingN = 0
  if devs then redis.call('ZREM', leasesKey, unpack(devs)) end
  if logN > 2 then
    redis.call('XADD', unpack(logArgs, 1, logN))
    logN = 2
  end
  return { code, payload }
end

local function expireLeases()
  local lapsed = redis.call('ZRANGEBYSCORE', leasesKey, '-inf', '(' .. nowS)
  if #lapsed == 0 then return 0 end
  local rows = {}
  for _, dev in ipairs(lapsed) do
    local r = readHold(dev)
    if r then rows[#rows + 1] = r else redis.call('ZREM', leasesKey, dev) end
  end
  endHolds(rows, 'lapsed')
  lapsedN = lapsedN + #rows
  return #lapsed
end

local function dropWaiter(id)
  redis.call('HDEL', waiterDataKey, id)
  waiterCache[id] = nil
end

-- A waiter record as stored: JSON with its fields in a fixed order (the client's part first).
local function encodeWaiter(w)
  return '{"devs":' .. cjson.encode(w.devs) .. ',"job":' .. cjson.encode(w.job) .. ',"stage":' ..
    cjson.encode(w.stage) .. ',"holder":' .. cjson.encode(w.holder) .. ',"prio":' ..
    cjson.encode(w.prio) .. ',"ready":' .. cjson.encode(w.ready) .. ',"lease":' .. int(w.lease) ..
    ',"ttl":' .. int(w.ttl) .. (w.reclaim and ',"reclaim":true' or '') .. ',"since":' ..
    int(w.since) .. ',"seq":' .. int(w.seq) .. ',"exp":' .. int(w.exp) .. '}'
end

-- Remembers w (waiter id's record, decoded from the stored string raw).
local function cacheWaiter(id, raw, w)
  w.id, w.raw = id, raw
  if waiterCacheN >= 10000 then waiterCache, waiterCacheN = {}, 0 end
  waiterCache[id] = w
  waiterCacheN = waiterCacheN + 1
  return w
end

-- The waiter record `raw` of waiter id, decoded (w.id set; devsJson/idJson filled by the grant).
-- Callers must not change the returned table, except to cache it again under its new string.
local function waiterOf(id, raw)
  local w = waiterCache[id]
  if w and w.raw == raw then return w end
  return cacheWaiter(id, raw, cjson.decode(raw))
end

-- Grants every device of waiter w at once (last[i] = freeToken(w.devs[i]), all free); returns
-- the grant as JSON for the waiter.
local function grantDevices(w, last)
  local leaseUntil = int(now + w.lease)
  local tokens, zargs = {}, { leasesKey }
  for i, dev in ipairs(w.devs) do
    local token = int(last[i] + 1)
    tokens[i] = token
    local e = pending[dev]
    if e then pending[dev] = nil end -- held again: later waiters in this pass must see the holder
    if e and e.reason ~= 'released' then
      -- The end of a lapsed or revoked hold is written with the grant, so that the late renew of
      -- the old holder still learns why it lost the device. (After a release nobody asks.)
      redis.call('HSET', devKey(dev), 'token', token, 'holder', w.holder, 'job', w.job,
        'stage', w.stage, 'leaseUntil', leaseUntil, 'grantedAt', nowS, 'waiter', w.id,
        'endedToken', e.tokenS, 'endReason', e.reason)
    else
      redis.call('HSET', devKey(dev), 'token', token, 'holder', w.holder, 'job', w.job,
        'stage', w.stage, 'leaseUntil', leaseUntil, 'grantedAt', nowS, 'waiter', w.id)
    end
    zargs[#zargs + 1] = leaseUntil
    zargs[#zargs + 1] = dev
  end
  redis.call('ZADD', unpack(zargs))
  if not w.devsJson then w.devsJson, w.idJson = cjson.encode(w.devs), cjson.encode(w.id) end
  local d, t = w.devsJson, '[' .. table.concat(tokens, ',') .. ']'
  log('grant', d, t, w.holder, w.job, w.stage, w.id, nowS, '', '')
  grantedN = grantedN + 1
  return '{"w":' .. w.idJson .. ',"d":' .. d .. ',"t":' .. t .. ',"u":' .. leaseUntil .. ',"a":' ..
    nowS .. '}'
end

-- Tokens of w's devices if all are free and none is in `reserved`, else nil.
local function grantable(w, reserved)
  local last = {}
  for i, dev in ipairs(w.devs) do
    if reserved[dev] then return nil end
    local token, stateless = freeToken(dev)
    if not token then return nil end
    if stateless and not w.reclaim and inGrace() then return nil end
    last[i] = token
  end
  return last
end

local function grantOrder(a, b)
  if a.prio ~= b.prio then return a.prio > b.prio end
  if a.ready ~= b.ready then return a.ready > b.ready end
  return a.seq < b.seq
end

-- Live waiters in grant order; first drops waiters whose expiry passed (their process is gone).
local function loadWaiters()
  local flat = redis.call('HGETALL', waiterDataKey)
  if #flat == 0 then return flat end
  local list, stale = {}, nil
  for i = 1, #flat, 2 do
    local w = waiterOf(flat[i], flat[i + 1])
    if w.exp < now then
      stale = stale or {}
      stale[#stale + 1] = flat[i]
    else
      list[#list + 1] = w
    end
  end
  if stale then
    redis.call('HDEL', waiterDataKey, unpack(stale))
    for _, id in ipairs(stale) do waiterCache[id] = nil end
    droppedN = droppedN + #stale
  end
  if #list > 1 then table.sort(list, grantOrder) end
  return list
end

-- Ends lapsed leases, then grants every waiter the policy allows. A grant to selfId is returned
-- (the caller replies with it); any other grant is pushed onto that waiter's wake list.
-- Pass skipExpire when the calling script already ended lapsed leases in this call.
local function grantPass(selfId, skipExpire)
  if not skipExpire then expireLeases() end
  local reserved = {}
  local selfGrant = nil
  for _, w in ipairs(loadWaiters()) do
    local last = grantable(w, reserved)
    if last then
      local payload = grantDevices(w, last)
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
