import { describe, expect, it } from '@jest/globals';
import { BrokenCircuitError, CircuitBreakerStateProvider, ResiliencePipelineBuilder } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { scripted } from '../../utils/flaky.js';

describe('composed pipelines', () => {
  it("retry (3 × 2^n s) around a breaker (4 consecutive failures, 5 s): the seeds' combined case", async () => {
    const time = new FakeTimeProvider();
    const log: string[] = [];
    const state = new CircuitBreakerStateProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRetry({
        maxRetryAttempts: 3,
        backoffType: 'exponential',
        delay: 2_000,
        onRetry: ({ retryDelay }) => void log.push(`retry after ${retryDelay / 1_000} s`),
      })
      .addCircuitBreaker({
        kind: 'consecutive',
        failureThreshold: 4,
        breakDuration: 5_000,
        stateProvider: state,
        onOpened: ({ breakDuration }) => void log.push(`breaking the circuit for ${breakDuration / 1_000} s`),
        onHalfOpened: () => void log.push('half-open: next call is a trial'),
        onClosed: () => void log.push('circuit closed'),
      })
      .build();

    const notFound = new Error('404 (Not Found)');
    const dependency = scripted<string>({ throws: notFound });
    const first = pipeline.execute(dependency);
    const firstSettled = expect(first).rejects.toBe(notFound);
    await time.advanceAsync(2_000 + 4_000 + 8_000);
    await firstSettled;
    expect(dependency.calls).toBe(4);
    expect(log).toEqual(['retry after 2 s', 'retry after 4 s', 'retry after 8 s', 'breaking the circuit for 5 s']);

    // The next call fails fast: no call, no retry, no wait.
    await expect(pipeline.execute(dependency)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(dependency.calls).toBe(4);
    expect(time.pendingTimerCount).toBe(0);

    // After the break one probe runs, and its success closes the circuit.
    time.advance(5_000);
    const healthy = scripted<string>({ returns: 'todo items' });
    await expect(pipeline.execute(healthy)).resolves.toBe('todo items');
    expect(healthy.calls).toBe(1);
    expect(state.circuitState).toBe('closed');
    expect(log.slice(4)).toEqual(['half-open: next call is a trial', 'circuit closed']);
  });

  it('fallback around retry around a breaker returns the fallback, also once the circuit is open', async () => {
    const time = new FakeTimeProvider();
    const reasons: string[] = [];
    const pipeline = new ResiliencePipelineBuilder<string>({ timeProvider: time })
      .addFallback({
        fallbackAction: ({ outcome }) => {
          reasons.push(outcome.ok ? 'result' : (outcome.error as Error).name);
          return 'paid through bank B';
        },
      })
      .addRetry({ maxRetryAttempts: 2, delay: 0 })
      .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 3, breakDuration: 60_000 })
      .build();
    const bankA = scripted<string>({ throws: new Error('bank A unavailable') });
    await expect(pipeline.execute(bankA)).resolves.toBe('paid through bank B');
    await expect(pipeline.execute(bankA)).resolves.toBe('paid through bank B');
    expect(bankA.calls).toBe(3);
    expect(reasons).toEqual(['Error', 'BrokenCircuitError']);
  });
});
