/**
 * Rate limits in Redis, one atomic script each. KEYS[1] the limit's key; ARGV[1] now (ms). Each answers
 * \`{ allowed (1 or 0), retryAfter (ms, -1 when allowed), remaining (permits left), resetAfter (ms until
 * the quota is whole again, 0 when it is) }\`.
 *
 * @internal
 */
export const TOKEN_BUCKET_SCRIPT = `
local now, limit, perPeriod, period = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local tokens = tonumber(redis.call('HGET', KEYS[1], 't'))
local last = tonumber(redis.call('HGET', KEYS[1], 'l'))
if tokens == nil then tokens = limit; last = now end
local periods = math.floor((now - last) / period)
if periods > 0 then
  tokens = math.min(limit, tokens + periods * perPeriod)
  last = last + periods * period
end
local allowed, retryAfter = 0, -1
if tokens >= 1 then tokens = tokens - 1; allowed = 1 else retryAfter = last + period - now end
redis.call('HSET', KEYS[1], 't', tokens, 'l', last)
redis.call('PEXPIRE', KEYS[1], math.ceil(limit / perPeriod + 1) * period)
local resetAfter = 0
if tokens < limit then resetAfter = last + math.ceil((limit - tokens) / perPeriod) * period - now end
return { allowed, retryAfter, math.floor(tokens), resetAfter }
`;

/** A sliding log: one sorted-set member per admitted call, dropped once a window old. @internal */
export const SLIDING_WINDOW_SCRIPT = `
local now, limit, window, member = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, member)
  redis.call('PEXPIRE', KEYS[1], window)
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  return { 1, -1, limit - count - 1, tonumber(newest[2]) + window - now }
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
return { 0, tonumber(oldest[2]) + window - now, 0, tonumber(newest[2]) + window - now }
`;
