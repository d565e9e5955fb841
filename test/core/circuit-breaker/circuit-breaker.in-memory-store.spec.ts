import { describe, expect, it } from '@jest/globals';
import { InMemoryCircuitBreakerStateStore, type CircuitPolicy } from '../../../src/core.entry.js';

/*
 * The in-memory store's answers, read directly: a store of one's own may wrap it (to log, to count), so
 * what each operation returns is its contract, not only what a breaker makes of it.
 */

const policy: CircuitPolicy = {
  kind: 'consecutive',
  failureThreshold: 1,
  failureRatio: 0.5,
  minimumThroughput: 10,
  samplingDuration: 30_000,
  windowSize: 100,
  breakDuration: 100,
  permittedCallsInHalfOpen: 1,
  successThresholdInHalfOpen: 1,
  maxHalfOpenWait: 1_000,
};

function openedAt(now: number) {
  const store = new InMemoryCircuitBreakerStateStore();
  const { permit } = store.acquire('k', policy, now);
  const opening = store.record('k', policy, permit!, 'failure', now);
  return { store, opening };
}

describe('InMemoryCircuitBreakerStateStore: what each operation answers', () => {
  it('admits a closed circuit with a permit that is no probe', () => {
    const store = new InMemoryCircuitBreakerStateStore();
    expect(store.acquire('k', policy, 0)).toEqual({ state: 'closed', permit: { generation: 0, probe: false } });
  });

  it('opens on the failure that reaches the threshold, then rejects as open until the break ends', () => {
    const { store, opening } = openedAt(1_000);
    expect(opening).toEqual({
      from: 'closed',
      to: 'open',
      reason: 'failure-threshold',
      breakDuration: 100,
      health: { throughput: 1, failures: 1, failureRatio: 1 },
    });
    expect(store.acquire('k', policy, 1_040)).toEqual({ state: 'open', retryAfter: 60 });
  });

  it('answers the first call after the break as half-open, with a probe permit and the half-opening', () => {
    const { store } = openedAt(1_000);
    expect(store.acquire('k', policy, 1_100)).toEqual({
      state: 'half-open',
      permit: { generation: 2, probe: true },
      transition: { from: 'open', to: 'half-open', reason: 'break-elapsed' },
    });
    expect(store.acquire('k', policy, 1_150)).toEqual({ state: 'half-open', retryAfter: 100, verdictDueAt: 2_100 });
  });

  it('answers a call after a hung probe as open, with the new break and the reopening', () => {
    const { store } = openedAt(1_000);
    store.acquire('k', policy, 1_100); // the probe, which never reports
    expect(store.acquire('k', policy, 2_100)).toEqual({
      state: 'open',
      retryAfter: 100,
      transition: {
        from: 'half-open',
        to: 'open',
        reason: 'half-open-timeout',
        breakDuration: 100,
        // The measurements of the closed period, kept until the circuit closes.
        health: { throughput: 1, failures: 1, failureRatio: 1 },
      },
    });
  });
});
