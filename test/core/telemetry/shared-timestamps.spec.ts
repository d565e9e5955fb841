import { describe, expect, it } from '@jest/globals';
import {
  ResilienceContext,
  ResiliencePipelineBuilder,
  type ResilienceEvent,
  type TelemetryListener,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/** A fake clock that counts its duration timestamps. */
class CountingClock extends FakeTimeProvider {
  reads = 0;
  override getTimestamp(): number {
    this.reads++;
    return super.getTimestamp();
  }
}

/** A listener recording the events it wants (all, unless `names` says which). */
function recorder(names?: readonly string[]): TelemetryListener & { events: ResilienceEvent[] } {
  const events: ResilienceEvent[] = [];
  return {
    events,
    write: (event) => void events.push(event),
    wants: (name) => names === undefined || names.includes(name),
  };
}

const durations = (events: readonly ResilienceEvent[]) =>
  events
    .filter((e) => 'duration' in e.arguments)
    .map((e) => [e.eventName, (e.arguments as { duration: number }).duration]);

describe('durations that start or end together read the clock once', () => {
  it('a pipeline whose outermost strategy is a retry shares its start and end with the first attempt', async () => {
    const time = new CountingClock();
    const listener = recorder();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 2, delay: 0 })
      .addCircuitBreaker()
      .addTimeout(1_000)
      .build();

    await pipeline.execute(() => {
      time.advance(0.75);
      return 'ok';
    });

    expect(durations(listener.events)).toEqual([
      ['ExecutionAttempt', 0.75],
      ['PipelineExecuted', 0.75],
    ]);
    expect(time.reads).toBe(2);
  });

  it('a retried call shares the pipeline start with the first attempt and reads every other instant', async () => {
    const time = new CountingClock();
    const listener = recorder();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 2, delay: 0 })
      .build();
    let calls = 0;

    await pipeline.execute(() => {
      time.advance(0.5);
      if (calls++ === 0) throw new Error('first');
      return 'ok';
    });

    expect(durations(listener.events)).toEqual([
      ['ExecutionAttempt', 0.5],
      ['OnRetry', 0.5],
      ['ExecutionAttempt', 0.5],
      ['PipelineExecuted', 1],
    ]);
    // Pipeline and first attempt start, first attempt end, second attempt start and end, pipeline end.
    expect(time.reads).toBe(5);
  });

  it("the shared end leaves out of the pipeline's duration what listeners do with the attempt's event", async () => {
    const time = new FakeTimeProvider();
    const listener = recorder();
    const slowListener: TelemetryListener = {
      write: (event) => {
        if (event.eventName === 'ExecutionAttempt') time.advance(10);
      },
    };
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [slowListener, listener] })
      .addRetry()
      .build();

    await pipeline.execute(() => {
      time.advance(1);
      return 'ok';
    });

    expect(durations(listener.events)).toEqual([
      ['ExecutionAttempt', 1],
      ['PipelineExecuted', 1],
    ]);
  });

  it('a retry that is not the outermost strategy times its attempts itself', async () => {
    const time = new CountingClock();
    const listener = recorder();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addCircuitBreaker()
      .addRetry({ maxRetryAttempts: 2, delay: 0 })
      .build();

    await pipeline.execute(() => {
      time.advance(0.25);
      return 'ok';
    });

    expect(durations(listener.events)).toEqual([
      ['ExecutionAttempt', 0.25],
      ['PipelineExecuted', 0.25],
    ]);
    expect(time.reads).toBe(4);
  });

  it('a retry of a pipeline run from the callback never takes the timestamp the outer pipeline read', async () => {
    const time = new FakeTimeProvider();
    const outerListener = recorder();
    const innerListener = recorder(['ExecutionAttempt']);
    // An aggressive timeout calls the rest of the pipeline while it is entered: the callback runs then.
    const outer = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [outerListener] })
      .addTimeout({ timeout: 1_000, mode: 'aggressive' })
      .build();
    const inner = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [innerListener] })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();

    await outer.execute(() => {
      time.advance(5);
      return inner.execute(() => {
        time.advance(1);
        return 'ok';
      });
    });

    expect(durations(innerListener.events)).toEqual([['ExecutionAttempt', 1]]);
    expect(durations(outerListener.events)).toEqual([['PipelineExecuted', 6]]);
  });

  it('an untimed listener leaves the clock alone', async () => {
    const time = new CountingClock();
    const listener: TelemetryListener = { write: () => undefined, wantsDuration: () => false };
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addRetry()
      .addTimeout(1_000)
      .build();
    await pipeline.execute(() => 'ok');
    expect(time.reads).toBe(0);
  });
});

describe("the pipeline's events run inline with its strategies", () => {
  it('a callback a listener wraps when a call starts runs inside that wrapper in that call only', async () => {
    const seen: string[] = [];
    let calls = 0;
    const listener: TelemetryListener = {
      write(event) {
        if (event.eventName !== 'PipelineExecuting') return;
        const call = ++calls;
        event.context.wrapCallback((run) => {
          seen.push(`wrapper ${call}`);
          return run();
        });
      },
    };
    const pipeline = new ResiliencePipelineBuilder({ telemetryListeners: [listener] }).addRetry().build();
    const context = new ResilienceContext();

    await expect(pipeline.execute(() => seen.push('first') && 'ok', context)).resolves.toBe('ok');
    await expect(pipeline.execute(() => seen.push('second') && 'again', context)).resolves.toBe('again');
    expect(seen).toEqual(['wrapper 1', 'first', 'wrapper 2', 'second']);
  });

  it('reports a failure that no strategy handles with its duration, after the start', async () => {
    const time = new FakeTimeProvider();
    const listener = recorder(['PipelineExecuting', 'PipelineExecuted']);
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addCircuitBreaker()
      .addTimeout(1_000)
      .build();

    await expect(
      pipeline.execute(() => {
        time.advance(2);
        throw new Error('down');
      }),
    ).rejects.toThrow('down');

    expect(listener.events.map((e) => [e.eventName, e.severity])).toEqual([
      ['PipelineExecuting', 'debug'],
      ['PipelineExecuted', 'error'],
    ]);
    expect(listener.events[1].arguments).toMatchObject({ outcome: { ok: false }, duration: 2 });
  });
});
