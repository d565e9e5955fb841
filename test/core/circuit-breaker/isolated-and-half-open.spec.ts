import { describe, expect, it } from '@jest/globals';
import {
  BrokenCircuitError,
  CircuitBreakerManualControl,
  CircuitBreakerStateProvider,
  isBrokenCircuitError,
  isIsolatedCircuitError,
  IsolatedCircuitError,
  ResiliencePipelineBuilder,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';

const down = new Error('down');

describe('IsolatedCircuitError', () => {
  it('is a BrokenCircuitError: one catch covers both, the guard still tells them apart', async () => {
    const control = new CircuitBreakerManualControl();
    const pipeline = new ResiliencePipelineBuilder().addCircuitBreaker({ manualControl: control }).build();
    await control.isolate();
    const error = await pipeline.execute(() => 'never').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IsolatedCircuitError);
    expect(error).toBeInstanceOf(BrokenCircuitError);
    expect(isBrokenCircuitError(error)).toBe(true);
    expect(isIsolatedCircuitError(error)).toBe(true);
    expect((error as BrokenCircuitError).retryAfter).toBeUndefined();
    expect(isIsolatedCircuitError(new BrokenCircuitError())).toBe(false);
  });
});

describe('half-open success threshold above the probe count', () => {
  async function opened(successThresholdInHalfOpen: number, permittedCallsInHalfOpen = 1) {
    const time = new FakeTimeProvider();
    const provider = new CircuitBreakerStateProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addCircuitBreaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 100,
        permittedCallsInHalfOpen,
        successThresholdInHalfOpen,
        stateProvider: provider,
      })
      .build();
    await pipeline.execute(() => Promise.reject(down)).catch(() => undefined);
    time.advance(100);
    return { pipeline, provider };
  }

  it('admits one probe at a time and closes after the third success', async () => {
    const { pipeline, provider } = await opened(3);
    for (let probe = 1; probe <= 3; probe++) {
      const gate = deferred<string>();
      const running = pipeline.execute(() => gate.promise);
      // While a probe runs, nobody else is admitted.
      await expect(pipeline.execute(() => 'extra')).rejects.toBeInstanceOf(BrokenCircuitError);
      gate.resolve(`probe ${probe}`);
      await expect(running).resolves.toBe(`probe ${probe}`);
      expect(`${probe}: ${provider.circuitState}`).toBe(`${probe}: ${probe < 3 ? 'half-open' : 'closed'}`);
    }
  });

  it('opens again on a failed probe, even after some succeeded', async () => {
    const { pipeline, provider } = await opened(3);
    await pipeline.execute(() => 'ok');
    await pipeline.execute(() => 'ok');
    await expect(pipeline.execute(() => Promise.reject(down))).rejects.toBe(down);
    expect(provider.circuitState).toBe('open');
  });

  it('admits two at a time towards a threshold of five, never more than needed', async () => {
    const { pipeline, provider } = await opened(5, 2);
    const gates = [deferred<string>(), deferred<string>()];
    const first = gates.map((g) => pipeline.execute(() => g.promise));
    await expect(pipeline.execute(() => 'third')).rejects.toBeInstanceOf(BrokenCircuitError);
    gates[0].resolve('a');
    await first[0];
    const more = [deferred<string>(), deferred<string>(), deferred<string>()];
    const second = pipeline.execute(() => more[0].promise); // took the freed place
    await expect(pipeline.execute(() => 'x')).rejects.toBeInstanceOf(BrokenCircuitError);
    gates[1].resolve('b');
    more[0].resolve('c');
    await Promise.all([first[1], second]);
    // Three succeeded, none in flight: two more places, and then no more (five issued).
    const last = [pipeline.execute(() => more[1].promise), pipeline.execute(() => more[2].promise)];
    await expect(pipeline.execute(() => 'x')).rejects.toBeInstanceOf(BrokenCircuitError);
    more[1].resolve('d');
    await last[0];
    await expect(pipeline.execute(() => 'x')).rejects.toBeInstanceOf(BrokenCircuitError);
    more[2].resolve('e');
    await last[1];
    expect(provider.circuitState).toBe('closed');
  });
});
