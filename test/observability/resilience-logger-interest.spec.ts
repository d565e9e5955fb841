import { describe, expect, it } from '@jest/globals';
import type { LoggerService } from '@nestjs/common';
import { ResilienceLoggerListener, ResiliencePipelineBuilder, type ResilienceEventMap } from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

const silent: LoggerService = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** A fake clock that counts how often durations are measured. */
class CountingClock extends FakeTimeProvider {
  timestamps = 0;
  override getTimestamp(): number {
    this.timestamps++;
    return super.getTimestamp();
  }
}

describe('ResilienceLoggerListener interest', () => {
  it('wants the events its levels make visible, not the per-call ones', () => {
    const logger = new ResilienceLoggerListener({ logger: silent });
    const wanted = (name: keyof ResilienceEventMap) => logger.wants(name);
    expect(wanted('OnRetry')).toBe(true);
    expect(wanted('OnRetryGiveUp')).toBe(true);
    expect(wanted('OnCircuitOpened')).toBe(true);
    expect(wanted('OnCircuitRejected')).toBe(true);
    expect(wanted('ExecutionAttempt')).toBe(false);
    expect(wanted('PipelineExecuting')).toBe(false);
    expect(wanted('PipelineExecuted')).toBe(false);
  });

  it('follows the configured levels', () => {
    const logger = new ResilienceLoggerListener({
      logger: silent,
      levels: { ExecutionAttempt: 'verbose', OnRetry: false },
    });
    expect(logger.wants('ExecutionAttempt')).toBe(true);
    expect(logger.wants('OnRetry')).toBe(false);
    expect(logger.wantsDuration('ExecutionAttempt')).toBe(true);
    expect(logger.wantsDuration('OnRetry')).toBe(false);
  });

  it('leaves the success path untimed and logs a retry when one happens', async () => {
    const time = new CountingClock();
    const lines: string[] = [];
    const logger = new ResilienceLoggerListener({ logger: { ...silent, warn: (line: string) => lines.push(line) } });
    const pipeline = new ResiliencePipelineBuilder({ name: 'orders', timeProvider: time, telemetryListeners: [logger] })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 5 })
      .addTimeout(1_000)
      .build();
    await pipeline.execute(async () => 42);
    expect(time.timestamps).toBe(0);
    let failed = false;
    await pipeline.execute(async () => {
      if (failed) return 1;
      failed = true;
      throw new Error('once');
    });
    expect(time.timestamps).toBe(0);
    expect(lines).toEqual([expect.stringMatching(/^OnRetry pipeline=orders strategy=retry attempt=0 delay=0ms/)]);
  });
});
