/**
 * The circuit state machine in Lua, run atomically by Redis per circuit: the same rules as
 * `CircuitStateMachine` (the in-memory store), so every process sharing a Redis sees one circuit.
 *
 * KEYS[1] the circuit's hash, KEYS[2] its count-window ring (a list).
 * ARGV: op, now, then the policy (kind, failureThreshold, failureRatio, minimumThroughput,
 * samplingDuration, windowSize, breakDuration, permitted, successThreshold, maxHalfOpenWait, ttl),
 * then the successes recorded but not yet sent (generation, count, at), then op arguments.
 *
 * Hash fields: st state, gen generation, bu blockedUntil, lbd lastBreakDuration, hos halfOpenSince,
 * hoa halfOpenAttempts, pi probesIssued, ps probesSucceeded, lta lastTransitionAt, cf consecutive
 * failures, w time-window buckets ("start:successes:failures|…"), rc ring count, rf ring failures.
 *
 * @internal
 */
export const CIRCUIT_SCRIPT = `
local h, ring = KEYS[1], KEYS[2]
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
local pendingCount = tonumber(ARGV[15])
local pendingAt = tonumber(ARGV[16])

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
local rc = tonumber(s.rc or '0')
local rf = tonumber(s.rf or '0')
local changed = false

-- time-window buckets --------------------------------------------------------------------------------
local buckets = {}
if w ~= '' then
  for entry in string.gmatch(w, '[^|]+') do
    local a, b, c = string.match(entry, '([^:]+):([^:]+):([^:]+)')
    buckets[#buckets + 1] = { tonumber(a), tonumber(b), tonumber(c) }
  end
end
local function currentBucket(t)
  local last = buckets[#buckets]
  if last == nil or t - last[1] >= samplingDuration / 10 then
    last = { t, 0, 0 }
    buckets[#buckets + 1] = last
  end
  while t - buckets[1][1] >= samplingDuration do table.remove(buckets, 1) end
  return last
end
local function saveBuckets()
  local parts = {}
  for i, b in ipairs(buckets) do parts[i] = b[1] .. ':' .. b[2] .. ':' .. b[3] end
  w = table.concat(parts, '|')
end

-- measurements ----------------------------------------------------------------------------------------
local function measure(failed, count, t)
  if kind == 'consecutive' then
    if failed then cf = cf + count else cf = 0 end
  elseif kind == 'count-window' then
    for _ = 1, count do
      redis.call('RPUSH', ring, failed and '1' or '0')
      rc = rc + 1
      if failed then rf = rf + 1 end
      if rc > windowSize then
        if redis.call('LPOP', ring) == '1' then rf = rf - 1 end
        rc = rc - 1
      end
    end
  else
    local b = currentBucket(t)
    if failed then b[3] = b[3] + count else b[2] = b[2] + count end
    saveBuckets()
  end
  changed = true
end
local function health(t)
  if kind == 'consecutive' then
    return cf, cf
  elseif kind == 'count-window' then
    return rc, rf
  end
  if #buckets > 0 then currentBucket(t); saveBuckets() end
  local total, failures = 0, 0
  for _, b in ipairs(buckets) do total = total + b[2] + b[3]; failures = failures + b[3] end
  return total, failures
end
local function shouldBreak(t)
  if kind == 'consecutive' then return cf >= failureThreshold end
  local total, failures = health(t)
  return total >= minimumThroughput and failures / total >= failureRatio
end
local function resetMetrics()
  cf = 0; w = ''; buckets = {}; rc = 0; rf = 0
  redis.call('DEL', ring)
end

-- transitions -----------------------------------------------------------------------------------------
local tFrom, tTo, tReason, tBreak, hT, hF = '', '', '', -1, -1, -1
local function moveTo(to, reason)
  tFrom, tTo, tReason = state, to, reason
  state = to; gen = gen + 1; lta = now; changed = true
end
local function open(reason)
  hT, hF = health(now)
  if state == 'half-open' then hoa = hoa + 1 else hoa = 0 end
  bu = now + breakDuration; lbd = breakDuration; pi = 0; ps = 0
  moveTo('open', reason)
  tBreak = breakDuration
end
local function close(reason)
  resetMetrics(); hoa = 0; pi = 0; ps = 0
  if state ~= 'closed' then moveTo('closed', reason) else changed = true end
end

-- successes recorded since the last call (closed period only) ------------------------------------------
if pendingCount > 0 and pendingGen == gen and state == 'closed' then measure(false, pendingCount, pendingAt) end

local result
if op == 'acquire' then
  local admitted, probe, retryAfter, verdictDueAt = 0, 0, -1, -1
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
    elseif pi < permitted then
      pi = pi + 1; changed = true; admitted = 1; probe = 1
    else
      retryAfter = math.max(1, lbd); verdictDueAt = hos + maxHalfOpenWait
    end
  end
  result = { admitted, state, gen, probe, retryAfter, verdictDueAt }
elseif op == 'record' then
  local permitGen, isProbe, outcome = tonumber(ARGV[17]), ARGV[18] == '1', ARGV[19]
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
      if outcome == 'failure' and shouldBreak(now) then open('failure-threshold') end
    end
  end
  result = { state, gen }
elseif op == 'setBreak' then
  if tonumber(ARGV[17]) == gen and state == 'open' then
    bu = lta + tonumber(ARGV[18]); lbd = tonumber(ARGV[18]); changed = true
  end
  result = { state, gen }
elseif op == 'isolate' then
  if state ~= 'isolated' then moveTo('isolated', 'manual-isolate') end
  result = { state, gen }
elseif op == 'close' then
  close('manual-close')
  result = { state, gen }
elseif op == 'export' then
  health(now)
  result = { state, gen }
elseif op == 'import' then
  -- ARGV[17..]: state, generation, blockedUntil, lastBreakDuration, halfOpenSince, halfOpenAttempts,
  -- lastTransitionAt, metric payload (consecutive count, buckets, or ring as "0101…")
  resetMetrics()
  state = ARGV[17]; gen = tonumber(ARGV[18]) + 1; bu = tonumber(ARGV[19]); lbd = tonumber(ARGV[20])
  hos = tonumber(ARGV[21]); hoa = tonumber(ARGV[22]); lta = tonumber(ARGV[23]); pi = 0; ps = 0
  if state == 'half-open' then state = 'open'; bu = hos end
  if kind == 'consecutive' then cf = tonumber(ARGV[24]) or 0
  elseif kind == 'count-window' then
    local outcomes = ARGV[24] or ''
    for i = math.max(1, #outcomes - windowSize + 1), #outcomes do
      local c = string.sub(outcomes, i, i)
      redis.call('RPUSH', ring, c); rc = rc + 1
      if c == '1' then rf = rf + 1 end
    end
  else
    w = ARGV[24] or ''
  end
  changed = true
  result = { state, gen }
end

if changed then
  redis.call('HSET', h, 'st', state, 'gen', gen, 'bu', bu, 'lbd', lbd, 'hos', hos, 'hoa', hoa, 'pi', pi,
    'ps', ps, 'lta', lta, 'cf', cf, 'w', w, 'rc', rc, 'rf', rf)
  local ttl = ttlBase
  if state ~= 'closed' then ttl = math.max(ttl, bu - now + maxHalfOpenWait + ttlBase) end
  redis.call('PEXPIRE', h, math.floor(ttl))
  if rc > 0 then redis.call('PEXPIRE', ring, math.floor(ttl)) end
end

if op == 'export' then
  local ringValues = ''
  if kind == 'count-window' then ringValues = table.concat(redis.call('LRANGE', ring, 0, -1), '') end
  return { state, gen, bu, lbd, hos, hoa, pi, ps, lta, cf, w, ringValues }
end
for _, v in ipairs({ tFrom, tTo, tReason, tBreak, hT, hF }) do result[#result + 1] = v end
return result
`;
