import { describe, expect, it } from '@jest/globals';
import { ResiliencePipelineBuilder, RetryBudget } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { RecordingListener } from '../../utils/recording.listener.js';

const down = () => Promise.reject(new Error('down'));

describe('retry budget', () => {
  it('caps retries to a share of traffic plus a floor, then ends the loop with the last outcome and an event', async () => {
    const time = new FakeTimeProvider();
    const listener = new RecordingListener();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 3, delay: 0, budget: { ratio: 0.1, minRetriesPerSecond: 0.5, window: 10_000 } })
      .build();
    // Floor: 0.5/s × 10 s = 5 retries; ratio: 10 % of calls. 20 failing calls → 5 + 2 = 7 retries at most.
    let calls = 0;
    for (let i = 0; i < 20; i++) {
      await pipeline
        .execute(() => {
          calls++;
          return down();
        })
        .catch(() => undefined);
    }
    expect(calls).toBe(20 + 7);
    const giveUps = listener.events
      .filter((e) => e.eventName === 'OnRetryGiveUp')
      .map((e) => (e.arguments as { reason: string }).reason);
    expect(giveUps.filter((r) => r === 'budget').length).toBeGreaterThan(0);
  });

  it('refills as the window slides, and can be shared by several pipelines', async () => {
    const time = new FakeTimeProvider();
    const budget = new RetryBudget({ ratio: 0, minRetriesPerSecond: 0.2, window: 10_000 }, time); // 2 retries per 10 s
    const a = new ResiliencePipelineBuilder({ timeProvider: time }).addRetry({ delay: 0, budget }).build();
    const b = new ResiliencePipelineBuilder({ timeProvider: time }).addRetry({ delay: 0, budget }).build();
    let calls = 0;
    const failing = () => {
      calls++;
      return down();
    };
    await a.execute(failing).catch(() => undefined); // 1 + 2 retries
    await b.execute(failing).catch(() => undefined); // budget spent: 1 call
    expect(calls).toBe(4);
    expect(budget.statistics).toMatchObject({ calls: 2, retries: 2, allowed: 2 });
    time.advance(10_000);
    await b.execute(failing).catch(() => undefined);
    expect(calls).toBe(4 + 3);
  });
});
