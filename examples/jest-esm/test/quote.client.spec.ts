import { describe, expect, it } from '@jest/globals';
import { BrokenCircuitError, TimeoutRejectedError } from 'nest-resilience/core';
import { FakeTimeProvider, getPipelineDescriptor, runWithFakeTime, waitForCircuitState } from 'nest-resilience/testing';
import { createQuoteRegistry, QuoteClient, type QuoteSource } from '../src/quote.client.js';

/** A source that fails `failures` times, then answers `price`. */
function flaky(failures: number, price = 1.09): QuoteSource & { calls: number } {
  return {
    calls: 0,
    latest() {
      this.calls += 1;
      return this.calls <= failures ? Promise.reject(new Error('quote service down')) : Promise.resolve(price);
    },
  };
}

/** A source that never answers until its signal aborts. */
const hanging: QuoteSource = {
  latest: (signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
};

describe('QuoteClient', () => {
  it('runs the pipeline the configuration describes', () => {
    const descriptor = getPipelineDescriptor(createQuoteRegistry().getPipeline('quotes'));
    expect(descriptor.strategies.map((strategy) => strategy.type)).toEqual(['retry', 'circuit-breaker', 'timeout']);
    expect(descriptor.strategies[0].options).toMatchObject({ maxRetryAttempts: 3, delay: 1_000 });
    expect(descriptor.isReloadable).toBe(true);
  });

  it('retries with exponential backoff on the fake clock: 1 s, 2 s, 4 s', async () => {
    const time = new FakeTimeProvider();
    const source = flaky(3);
    const client = new QuoteClient(createQuoteRegistry(time), source);
    await expect(runWithFakeTime(time, () => client.latest())).resolves.toBe(1.09);
    expect(source.calls).toBe(4);
    expect(time.now()).toBe(1_000 + 2_000 + 4_000);
  });

  it('gives each attempt 2 s', async () => {
    const time = new FakeTimeProvider();
    const client = new QuoteClient(createQuoteRegistry(time), hanging);
    await expect(runWithFakeTime(time, () => client.latest())).rejects.toBeInstanceOf(TimeoutRejectedError);
  });

  it('opens the circuit after four failures in a row, then rejects at once', async () => {
    const time = new FakeTimeProvider();
    const registry = createQuoteRegistry(time);
    const source = flaky(Infinity);
    const client = new QuoteClient(registry, source);
    await expect(runWithFakeTime(time, () => client.latest())).rejects.toThrow('quote service down');
    const circuit = await waitForCircuitState(registry, 'quotes', 'open', { timeProvider: time });
    expect(circuit.retryAfter).toBeGreaterThan(0);
    await expect(client.latest()).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(source.calls).toBe(4);
  });
});
