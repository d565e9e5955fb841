import { describe, expect, it } from '@jest/globals';
import { ResiliencePipelineBuilder, TimeoutRejectedError, type TimeoutMode } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/** A fake clock whose reading can be stepped back (as a wall clock corrected by NTP), while its timers keep their delays. */
class SteppingClock extends FakeTimeProvider {
  offset = 0;

  override now(): number {
    return super.now() + this.offset;
  }

  /** Time as the timers count it. */
  get elapsed(): number {
    return super.now();
  }
}

describe.each<TimeoutMode>(['cooperative', 'aggressive'])('a %s timeout on a clock that steps back', (mode) => {
  /** A pipeline on a stepping clock; `start(name)` begins a call that only a timeout ends, recording when. */
  function setup() {
    const clock = new SteppingClock();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: clock }).addTimeout({ timeout: 100, mode }).build();
    const ended: Record<string, number> = {};
    const start = (name: string) =>
      pipeline
        .execute(({ signal }) => clock.delay(10_000, signal))
        .catch((error: unknown) => {
          expect(error).toBeInstanceOf(TimeoutRejectedError);
          ended[name] = clock.elapsed;
        });
    return { clock, ended, start };
  }

  it('a call started after the step back ends 100 ms after it started, before an earlier call due later', async () => {
    const { clock, ended, start } = setup();
    const first = start('first');
    await clock.advanceAsync(10);
    clock.offset = -60;
    const second = start('second');
    // The two callbacks' own timers and the timeout's one.
    expect(clock.pendingTimerCount).toBe(3);
    await clock.advanceAsync(1_000);
    await Promise.all([first, second]);
    expect(ended).toEqual({ second: 110, first: 160 });
    expect(clock.pendingTimerCount).toBe(0);
  });

  it('a call after the clock is set right again goes after every earlier deadline', async () => {
    const { clock, ended, start } = setup();
    const first = start('first');
    await clock.advanceAsync(10);
    clock.offset = -60;
    const second = start('second');
    await clock.advanceAsync(20);
    clock.offset = 0;
    const third = start('third');
    await clock.advanceAsync(1_000);
    await Promise.all([first, second, third]);
    expect(ended).toEqual({ second: 110, first: 110, third: 130 });
    expect(clock.pendingTimerCount).toBe(0);
  });

  it('a timer that fired ends its call even if the clock now reads earlier than the deadline', async () => {
    const { clock, ended, start } = setup();
    const call = start('call');
    await clock.advanceAsync(50);
    clock.offset = -30;
    await clock.advanceAsync(1_000);
    await call;
    expect(ended).toEqual({ call: 100 });
    expect(clock.pendingTimerCount).toBe(0);
  });
});
