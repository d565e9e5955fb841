/**
 * The circuit state machine in Lua, run atomically by Redis per circuit: the same rules as
 * `CircuitStateMachine` (the in-memory store), so every process sharing a Redis sees one circuit.
 *
 * KEYS[1] the circuit's hash: its only key, so a script never touches two keys (nor two cluster slots).
 * ARGV: op, now, then the policy (kind, failureThreshold, failureRatio, minimumThroughput,
 * samplingDuration, windowSize, breakDuration, permitted, successThreshold, maxHalfOpenWait, ttl),
 * then the successes recorded but not yet sent (their generation, and "time:count,…" oldest first), then
 * op arguments from ARGV[16]. Every outcome is applied at the time it happened (the caller's clock): a
 * success older than the newest failure of a consecutive run does not end it, an outcome older than the
 * window does not enter it, and a late outcome takes its place in time order in the count window and in
 * the time-window buckets.
 *
 * Hash fields: st state, gen generation, bu blockedUntil, lbd lastBreakDuration, hos halfOpenSince,
 * hoa halfOpenAttempts, pi probesIssued, ps probesSucceeded, lta lastTransitionAt, cf consecutive
 * failures, ft their times ("t,t,…"), ls the time of the last success that ended a run, w time-window
 * buckets ("start:successes:failures|…"), rg/rt the count window (flags, fixed-width times).
 *
 * Reply (`export`: the fields): the transition the op made — from, to, reason, break, health throughput
 * and failures (false, i.e. nil, where there is none), and halfOpenAttempts (what a break generator
 * receives) — then the state and generation, then the op's own values (`acquire`: admitted, probe,
 * retryAfter, verdictDueAt, false where there is none).
 *
 * @internal
 */
export const CIRCUIT_SCRIPT = `
local h = KEYS[1]
local op = ARGV[1]
local now = tonumber(ARGV[2])
local kind = ARGV[3]
local failureThreshold = tonumber(ARGV[4])
local failureRatio = tonumber(ARGV[5])
local minimumThroughput = tonumber(ARGV[6])
local samplingDuration = tonumber(ARGV[7])
local windowSize = tonumber(ARGV[8])
local breakDuration = tonumber(ARGV[9])
local permitted = tonumber(ARGV[10])
local successThreshold = tonumber(ARGV[11])
local maxHalfOpenWait = tonumber(ARGV[12])
local ttlBase = tonumber(ARGV[13])
local pendingGen = tonumber(ARGV[14])
local pending = ARGV[15]

local s = {}
local raw = redis.call('HGETALL', h)
for i = 1, #raw, 2 do s[raw[i]] = raw[i + 1] end
local state = s.st or 'closed'
local gen = tonumber(s.gen or '0')
local bu = tonumber(s.bu or '0')
local lbd = tonumber(s.lbd or '0')
local hos = tonumber(s.hos or '0')
local hoa = tonumber(s.hoa or '0')
local pi = tonumber(s.pi or '0')
local ps = tonumber(s.ps or '0')
local lta = tonumber(s.lta or '0')
local cf = tonumber(s.cf or '0')
local w = s.w or ''
local rc, rf = 0, 0
local changed = false

-- time-window buckets --------------------------------------------------------------------------------
local width = samplingDuration / 10
local buckets = {}
if w ~= '' then
  for entry in string.gmatch(w, '[^|]+') do
    local a, b, c = string.match(entry, '([^:]+):([^:]+):([^:]+)')
    buckets[#buckets + 1] = { tonumber(a), tonumber(b), tonumber(c) }
  end
end
local function expireBuckets()
  while #buckets > 0 and now - buckets[1][1] >= samplingDuration do table.remove(buckets, 1) end
end
-- The bucket of an outcome at t: the newest bucket begun at most a bucket width before t, or a new one
-- begun at t. An outcome older than the window does not enter it (nil).
local function bucketAt(t)
  expireBuckets()
  if now - t >= samplingDuration then return nil end
  local n = #buckets
  local i = n
  while i >= 1 and buckets[i][1] > t do i = i - 1 end
  if i >= 1 and t - buckets[i][1] < width then return buckets[i] end
  local b = { t, 0, 0 }
  table.insert(buckets, i + 1, b)
  return b
end
local function saveBuckets()
  local parts = {}
  for i, b in ipairs(buckets) do parts[i] = b[1] .. ':' .. b[2] .. ':' .. b[3] end
  w = table.concat(parts, '|')
end

-- consecutive failures: the times of the current run, newer than the last success -----------------------
local ls = tonumber(s.ls or '0')
local ft = {}
if s.ft and s.ft ~= '' then
  for v in string.gmatch(s.ft, '[^,]+') do ft[#ft + 1] = tonumber(v) end
end
if s.ft == nil and cf > 0 then
  for _ = 1, cf do ft[#ft + 1] = lta end -- written before outcome times were kept
end
local function saveRun()
  while #ft > failureThreshold do table.remove(ft, 1) end
  cf = #ft
end

-- count window: the last windowSize outcomes, oldest first: rg their flags ("0101…"), rt their times
-- (fixed width), so an outcome in time order is a string append and only a late one needs a search.
local TW = 15
local rg, rt = '', ''
if kind == 'count-window' then
  rg, rt = s.rg or '', s.rt or ''
  if #rt ~= #rg * TW then rg, rt = '', '' end -- written by an older version: start afresh
  rc = #rg
  rf = select(2, string.gsub(rg, '1', ''))
end
local function ringTime(i)
  return tonumber(string.sub(rt, (i - 1) * TW + 1, i * TW))
end
local function ringInsert(failed, count, t)
  local at = rc + 1
  if rc > 0 and ringTime(rc) > t then
    if rc >= windowSize and t < ringTime(1) then return end -- older than the whole window
    local lo, hi = 1, rc -- the first position whose time is later than t (equal times: arrival order)
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if ringTime(mid) > t then hi = mid else lo = mid + 1 end
    end
    at = lo
  end
  local flags = string.rep(failed and '1' or '0', count)
  local times = string.rep(string.format('%0' .. TW .. 'd', t), count)
  rg = string.sub(rg, 1, at - 1) .. flags .. string.sub(rg, at)
  rt = string.sub(rt, 1, (at - 1) * TW) .. times .. string.sub(rt, (at - 1) * TW + 1)
  rc = rc + count
  if failed then rf = rf + count end
  if rc > windowSize then
    local drop = rc - windowSize
    rf = rf - select(2, string.gsub(string.sub(rg, 1, drop), '1', ''))
    rg = string.sub(rg, drop + 1)
    rt = string.sub(rt, drop * TW + 1)
    rc = windowSize
  end
end

-- measurements: each outcome at the time it happened ---------------------------------------------------
local function measure(failed, count, t)
  if kind == 'consecutive' then
    if failed then
      if t < ls then return end -- before the success that ended the run (same ms: arrival order)
      for _ = 1, count do ft[#ft + 1] = t end
      table.sort(ft)
    else
      if t < ls then return end -- an older success: a later one already ended that run
      ls = t
      local kept = {}
      for _, f in ipairs(ft) do if f > t then kept[#kept + 1] = f end end
      ft = kept
    end
    saveRun()
  elseif kind == 'count-window' then
    ringInsert(failed, count, t)
  else
    local b = bucketAt(t)
    if b == nil then return end
    if failed then b[3] = b[3] + count else b[2] = b[2] + count end
    saveBuckets()
  end
  changed = true
end
local function health()
  if kind == 'consecutive' then
    return cf, cf
  elseif kind == 'count-window' then
    return rc, rf
  end
  if #buckets > 0 then bucketAt(now); saveBuckets() end
  local total, failures = 0, 0
  for _, b in ipairs(buckets) do total = total + b[2] + b[3]; failures = failures + b[3] end
  return total, failures
end
local function shouldBreak()
  if kind == 'consecutive' then return cf >= failureThreshold end
  local total, failures = health()
  return total >= minimumThroughput and failures / total >= failureRatio
end
local function resetMetrics()
  cf = 0; ft = {}; w = ''; buckets = {}; rc = 0; rf = 0; rg = ''; rt = ''
end

-- transitions -----------------------------------------------------------------------------------------
local tFrom, tTo, tReason, tBreak, hT, hF = false, false, false, false, false, false
local function moveTo(to, reason)
  tFrom, tTo, tReason = state, to, reason
  state = to; gen = gen + 1; lta = now; changed = true
end
local function open(reason)
  hT, hF = health()
  if state == 'half-open' then hoa = hoa + 1 else hoa = 0 end
  bu = now + breakDuration; lbd = breakDuration; pi = 0; ps = 0
  moveTo('open', reason)
  tBreak = breakDuration
end
local function close(reason)
  resetMetrics(); hoa = 0; pi = 0; ps = 0
  if state ~= 'closed' then moveTo('closed', reason) else changed = true end
end

-- successes recorded since the last call, each group at its own time (closed period only) ---------------
if pending ~= '' and pendingGen == gen and state == 'closed' then
  for t, c in string.gmatch(pending, '(%d+):(%d+)') do measure(false, tonumber(c), tonumber(t)) end
end

local result = {}
if op == 'acquire' then
  local admitted, probe, retryAfter, verdictDueAt = 0, 0, false, false
  if state == 'closed' then
    admitted = 1
  elseif state == 'open' then
    if now < bu then
      retryAfter = bu - now
    else
      moveTo('half-open', 'break-elapsed'); hos = now; pi = 1; ps = 0
      admitted = 1; probe = 1
    end
  elseif state == 'half-open' then
    if now - hos >= maxHalfOpenWait then
      open('half-open-timeout'); retryAfter = bu - now
    elseif pi - ps < permitted and pi < math.max(permitted, successThreshold) then
      pi = pi + 1; changed = true; admitted = 1; probe = 1
    else
      retryAfter = math.max(1, lbd); verdictDueAt = hos + maxHalfOpenWait
    end
  end
  result = { admitted, probe, retryAfter, verdictDueAt }
elseif op == 'record' then
  local permitGen, isProbe, outcome = tonumber(ARGV[16]), ARGV[17] == '1', ARGV[18]
  if permitGen == gen then
    if isProbe then
      if outcome == 'ignored' then pi = pi - 1; changed = true
      elseif outcome == 'failure' then open('probe-failed')
      else
        ps = ps + 1; changed = true
        if ps >= successThreshold then close('probes-succeeded') end
      end
    elseif outcome ~= 'ignored' then
      measure(outcome == 'failure', 1, now)
      if outcome == 'failure' and shouldBreak() then open('failure-threshold') end
    end
  end
elseif op == 'setBreak' then
  if tonumber(ARGV[16]) == gen and state == 'open' then
    bu = lta + tonumber(ARGV[17]); lbd = tonumber(ARGV[17]); changed = true
  end
elseif op == 'isolate' then
  if state ~= 'isolated' then moveTo('isolated', 'manual-isolate') end
elseif op == 'close' then
  close('manual-close')
elseif op == 'export' then
  health()
elseif op == 'writeBack' and state == 'isolated' then
  -- a write-back after an outage never undoes an isolation made meanwhile (through another instance)
elseif op == 'import' or op == 'writeBack' then
  -- ARGV[16..]: state, generation, blockedUntil, lastBreakDuration, halfOpenSince, halfOpenAttempts,
  -- lastTransitionAt, metric payload (consecutive count, buckets, or ring as "0101…")
  resetMetrics()
  state = ARGV[16]; gen = tonumber(ARGV[17]) + 1; bu = tonumber(ARGV[18]); lbd = tonumber(ARGV[19])
  hos = tonumber(ARGV[20]); hoa = tonumber(ARGV[21]); lta = tonumber(ARGV[22]); pi = 0; ps = 0
  if state == 'half-open' then state = 'open'; bu = hos end
  ls = 0
  if kind == 'consecutive' then
    for _ = 1, math.min(failureThreshold, tonumber(ARGV[23]) or 0) do ft[#ft + 1] = lta end
    saveRun()
  elseif kind == 'count-window' then
    local outcomes = string.gsub(ARGV[23] or '', '[^01]', '')
    rg = string.sub(outcomes, math.max(1, #outcomes - windowSize + 1))
    rc = #rg
    rf = select(2, string.gsub(rg, '1', ''))
    rt = string.rep(string.format('%0' .. TW .. 'd', lta), rc)
  else
    w = ARGV[23] or ''
  end
  changed = true
end

if changed then
  redis.call('HSET', h, 'st', state, 'gen', gen, 'bu', bu, 'lbd', lbd, 'hos', hos, 'hoa', hoa, 'pi', pi,
    'ps', ps, 'lta', lta, 'cf', cf, 'w', w, 'rg', rg, 'rt', rt, 'ls', ls, 'ft', table.concat(ft, ','))
  local ttl = ttlBase
  if state ~= 'closed' then ttl = math.max(ttl, bu - now + maxHalfOpenWait + ttlBase) end
  redis.call('PEXPIRE', h, math.floor(ttl))
end

if op == 'export' then
  local ringValues = ''
  if kind == 'count-window' then ringValues = rg end
  return { state, gen, bu, lbd, hos, hoa, pi, ps, lta, cf, w, ringValues }
end
local reply = { tFrom, tTo, tReason, tBreak, hT, hF, hoa, state, gen }
for i = 1, #result do reply[#reply + 1] = result[i] end
return reply
`;
