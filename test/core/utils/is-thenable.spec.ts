import { describe, expect, it } from '@jest/globals';
import {
  InMemoryCircuitBreakerStateStore,
  ResiliencePipelineBuilder,
  type CircuitCallResult,
  type CircuitPermit,
  type CircuitPolicy,
  type RateLimitLease,
  type RateLimiter,
} from '../../../src/core.entry.js';

const lease: RateLimitLease = { acquired: true, release: () => undefined };

/** A limiter of your own whose acquire answers with `answer()`. */
function limiter(answer: () => unknown): RateLimiter {
  return { acquire: () => answer() as RateLimitLease, isIdle: () => true, dispose: () => undefined };
}

describe('thenables from code of your own', () => {
  it.each<[string, () => unknown]>([
    ['a lease', () => lease],
    ['a promise of a lease', () => Promise.resolve(lease)],
    ['a thenable object (not a Promise)', () => ({ then: (f: never, r: never) => Promise.resolve(lease).then(f, r) })],
    [
      'a callable thenable',
      () => Object.assign(() => undefined, { then: (f: never, r: never) => Promise.resolve(lease).then(f, r) }),
    ],
  ])('a rate limiter answering with %s admits the call', async (_, answer) => {
    const pipeline = new ResiliencePipelineBuilder().addRateLimiter({ limiter: limiter(answer) }).build();
    await expect(pipeline.execute(() => 'admitted')).resolves.toBe('admitted');
  });

  it('a lease object with a then that is not a function is a lease, not a thenable', async () => {
    const odd = { ...lease, then: 'not a function' };
    const pipeline = new ResiliencePipelineBuilder().addRateLimiter({ limiter: limiter(() => odd) }).build();
    await expect(pipeline.execute(() => 'admitted')).resolves.toBe('admitted');
  });

  it('a state store answering null for "no transition" works like undefined', async () => {
    class NullStore extends InMemoryCircuitBreakerStateStore {
      override record(
        key: string,
        policy: CircuitPolicy,
        permit: CircuitPermit,
        result: CircuitCallResult,
        now: number,
      ) {
        return super.record(key, policy, permit, result, now) ?? (null as never);
      }
    }
    const pipeline = new ResiliencePipelineBuilder()
      .addCircuitBreaker({ kind: 'count-window', circuitKey: 'db', stateStore: new NullStore() })
      .build();
    await expect(pipeline.execute(() => 'ok')).resolves.toBe('ok');
    await expect(pipeline.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await expect(pipeline.execute(() => 'again')).resolves.toBe('again');
  });
});
