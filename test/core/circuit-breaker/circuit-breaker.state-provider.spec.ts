import { describe, expect, it } from '@jest/globals';
import { CircuitBreakerStateProvider, ResiliencePipelineBuilder } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

const down = new Error('dependency down');

function pipelineWith(provider: CircuitBreakerStateProvider, name = 'billing') {
  return new ResiliencePipelineBuilder({ name, timeProvider: new FakeTimeProvider() })
    .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 1, stateProvider: provider })
    .build();
}

describe('CircuitBreakerStateProvider', () => {
  describe('before a breaker uses it', () => {
    it('is not initialised, reads closed, and knows no outcome and no key', () => {
      const provider = new CircuitBreakerStateProvider();
      expect(provider.isInitialized).toBe(false);
      expect(provider.circuitState).toBe('closed');
      expect(provider.lastHandledOutcome).toBeUndefined();
      expect(provider.circuitKey).toBeUndefined();
    });

    it('rejects exporting and importing a snapshot, saying no breaker uses it yet', async () => {
      const inUse = new CircuitBreakerStateProvider();
      pipelineWith(inUse);
      const snapshot = await inUse.exportSnapshot();
      const provider = new CircuitBreakerStateProvider();
      const unused = 'This CircuitBreakerStateProvider is not used by any circuit breaker yet.';
      // Promises that reject (never a synchronous throw), so `.catch()` on them handles the error.
      await expect(provider.exportSnapshot().catch((e: Error) => e.message)).resolves.toBe(unused);
      await expect(provider.importSnapshot(snapshot).catch((e: Error) => e.message)).resolves.toBe(unused);
    });
  });

  describe('once a breaker uses it', () => {
    it('is initialised from the build on and reads that breaker: its key, state and last handled failure', async () => {
      const provider = new CircuitBreakerStateProvider();
      const pipeline = pipelineWith(provider);
      expect(provider.isInitialized).toBe(true);
      expect(provider.circuitKey).toBe('billing/circuit-breaker');
      expect(provider.circuitState).toBe('closed');
      expect(provider.lastHandledOutcome).toBeUndefined();
      await expect(pipeline.execute(() => Promise.reject(down))).rejects.toBe(down);
      expect(provider.circuitState).toBe('open');
      expect(provider.lastHandledOutcome).toEqual({ ok: false, error: down });
      expect((await provider.exportSnapshot()).state).toBe('open');
    });

    it('refuses a second breaker: building it fails, and the provider keeps reading the first', async () => {
      const provider = new CircuitBreakerStateProvider();
      const first = pipelineWith(provider, 'first');
      expect(() => pipelineWith(provider, 'second')).toThrow(
        'This CircuitBreakerStateProvider is already used by another circuit breaker.',
      );
      expect(provider.circuitKey).toBe('first/circuit-breaker');
      await expect(first.execute(() => Promise.reject(down))).rejects.toBe(down);
      expect(provider.circuitState).toBe('open');
    });
  });
});
