/**
 * One sync of an adaptive throttling window, atomic. KEYS: the window's bucket keys, oldest first (one hash
 * tag: one slot). ARGV[1] the instance, ARGV[2] the keys' expiry (ms), then per bucket the instance counted
 * in: the index of its key in KEYS, and the instance's running totals of requests and accepts there.
 *
 * Each bucket is a hash: `r` and `a`, the fleet's sums, and `r:<instance>` / `a:<instance>`, the highest
 * totals each instance sent — a total no higher than the one recorded adds nothing, so a sync applied
 * twice (or late) never counts twice. Answers `{ requests, accepts }` of every key, in KEYS order.
 *
 * @internal
 */
export const ADAPTIVE_THROTTLING_SYNC_SCRIPT = `
local instance, ttl = ARGV[1], ARGV[2]
local fields = { 'r', 'a' }
for i = 3, #ARGV, 3 do
  local key = KEYS[tonumber(ARGV[i])]
  for c = 1, 2 do
    local total = tonumber(ARGV[i + c])
    local own = fields[c] .. ':' .. instance
    local sent = tonumber(redis.call('HGET', key, own) or '0')
    if total > sent then
      redis.call('HINCRBY', key, fields[c], total - sent)
      redis.call('HSET', key, own, total)
    end
  end
  redis.call('PEXPIRE', key, ttl)
end
local answer = {}
for i = 1, #KEYS do
  local counts = redis.call('HMGET', KEYS[i], 'r', 'a')
  answer[2 * i - 1] = tonumber(counts[1] or '0')
  answer[2 * i] = tonumber(counts[2] or '0')
end
return answer
`;
