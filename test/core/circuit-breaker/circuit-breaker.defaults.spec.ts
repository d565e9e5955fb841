import { describe, expect, it } from '@jest/globals';
import {
  CircuitBreakerStateProvider,
  defaultCircuitKey,
  ResiliencePipelineBuilder,
  type CircuitBreakerStrategyOptions,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred, nextTurn, settle } from '../../utils/flaky.js';

const down = new Error('dependency down');
const fail = (): Promise<string> => Promise.reject(down);
const ok = (): Promise<string> => Promise.resolve('ok');

function breaker(
  options: CircuitBreakerStrategyOptions<unknown> = {},
  pipelineOptions: { name?: string } = { name: 'd' },
) {
  const time = new FakeTimeProvider();
  const provider = new CircuitBreakerStateProvider();
  const pipeline = new ResiliencePipelineBuilder({ ...pipelineOptions, timeProvider: time })
    .addCircuitBreaker({ stateProvider: provider, ...options })
    .build();
  return { pipeline, provider, time };
}

describe('circuit breaker defaults', () => {
  it('time-window by default: opens at a 10 % failure ratio once 100 calls were measured', async () => {
    const { pipeline, provider } = breaker();
    for (let i = 0; i < 90; i++) await pipeline.execute(ok);
    for (let i = 0; i < 9; i++) await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('closed'); // 99 calls: below the throughput
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('open'); // 100 calls, 10 failures
    expect((await provider.exportSnapshot()).metrics.kind).toBe('time-window');
  });

  it('measures 30 s by default: failures older than that are forgotten', async () => {
    const { pipeline, provider, time } = breaker({ minimumThroughput: 2, failureRatio: 1 });
    await settle(pipeline.execute(fail));
    time.advance(29_999);
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('open');

    const other = breaker({ minimumThroughput: 2, failureRatio: 1 });
    await settle(other.pipeline.execute(fail));
    other.time.advance(30_000);
    await settle(other.pipeline.execute(fail));
    expect(other.provider.circuitState).toBe('closed');
  });

  it('breaks for 5 s by default', async () => {
    const { pipeline } = breaker({ kind: 'consecutive', failureThreshold: 1 });
    await settle(pipeline.execute(fail));
    expect(await settle(pipeline.execute(ok))).toMatchObject({ retryAfter: 5_000 });
  });

  it('consecutive: five failures in a row by default', async () => {
    const { pipeline, provider } = breaker({ kind: 'consecutive' });
    for (let i = 0; i < 4; i++) await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('closed');
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('open');
  });

  it('count-window: the last 100 calls by default', async () => {
    const { pipeline, provider } = breaker({ kind: 'count-window', minimumThroughput: 100, failureRatio: 1 });
    for (let i = 0; i < 100; i++) await settle(pipeline.execute(i === 0 ? ok : fail));
    expect(provider.circuitState).toBe('closed'); // 99 of the last 100 failed
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('open'); // the success left the window
    expect(((await provider.exportSnapshot()).metrics as { outcomes: string }).outcomes).toBe('1'.repeat(100));
  });

  it('one probe at a time by default, and as many successes to close as probes admitted', async () => {
    const { pipeline, provider, time } = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 10 });
    await settle(pipeline.execute(fail));
    time.advance(10);
    const probe = deferred<string>();
    const probing = pipeline.execute(() => probe.promise);
    await nextTurn();
    expect(await settle(pipeline.execute(ok))).toMatchObject({ name: 'BrokenCircuitError' });
    probe.resolve('ok');
    await probing;
    expect(provider.circuitState).toBe('closed');

    const three = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 10, permittedCallsInHalfOpen: 3 });
    await settle(three.pipeline.execute(fail));
    three.time.advance(10);
    await three.pipeline.execute(ok);
    await three.pipeline.execute(ok);
    expect(three.provider.circuitState).toBe('half-open');
    await three.pipeline.execute(ok);
    expect(three.provider.circuitState).toBe('closed');
  });

  it('waits 30 s for a probe by default before treating it as failed', async () => {
    const { pipeline, provider, time } = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 10 });
    await settle(pipeline.execute(fail));
    time.advance(10);
    void pipeline.execute(() => new Promise<string>(() => undefined));
    await nextTurn();
    time.advance(29_999);
    await settle(pipeline.execute(ok));
    expect(provider.circuitState).toBe('half-open');
    time.advance(1);
    await settle(pipeline.execute(ok));
    expect(provider.circuitState).toBe('open');
  });

  it('a circuit is closed before its first call', () => {
    expect(breaker().provider.circuitState).toBe('closed');
  });

  it('keys a circuit by pipeline, instance and strategy name', () => {
    expect(breaker({}, { name: 'orders' }).provider.circuitKey).toBe('orders/circuit-breaker');
    expect(breaker({ name: 'payments' }, { name: 'orders' }).provider.circuitKey).toBe('orders/payments');
    expect(breaker({}, {}).provider.circuitKey).toBe('pipeline/circuit-breaker');
    expect(breaker({ circuitKey: 'mine' }).provider.circuitKey).toBe('mine');
    expect(defaultCircuitKey('orders', 'eu', 'payments')).toBe('orders/eu/payments');
    expect(defaultCircuitKey(undefined)).toBe('pipeline/circuit-breaker');
    expect(defaultCircuitKey('orders', 'eu')).toBe('orders/eu/circuit-breaker');
  });
});
