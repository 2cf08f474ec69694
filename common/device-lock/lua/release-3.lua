--[[
  End the caller's hold on devices (release) or the current hold whatever its token (revoke),
  then hand the freed devices to waiters in the same step.

  KEYS[1] leases zset, KEYS[2] timeline stream, KEYS[3] waiter records
  ARGV[1] key base, ARGV[2] timeline MAXLEN
  ARGV[3] reason recorded in the timeline: "released" or "revoked"
  ARGV[4] "1" = force (admin revoke: end the current holder, whoever it is)
  ARGV[5..] device, token, device, token, ... (token ignored when forced); plain arguments, not
            JSON, to spare a decode on the handoff path

  Returns {0, lostJson}: JSON array of the devices this call did not end because the caller no
  longer held them (lease lapsed, revoked, or a newer token); empty array = all ended.
]]
--- @include "lock-core"

nowMs()
local force = ARGV[4] == '1'
-- A lease that lapsed before this call ends as "lapsed", not "released".
expireLeases()
local rows, lost = {}, {}
for i = 5, #ARGV, 2 do
  local dev = ARGV[i]
  local r = readHold(dev)
  if r and (force or r.token == tonumber(ARGV[i + 1])) then
    rows[#rows + 1] = r
  else
    lost[#lost + 1] = dev
  end
end
endHolds(rows, ARGV[3])
grantPass(nil, true)
if #lost == 0 then return finish(0, '[]') end
return finish(0, cjson.encode(lost))
