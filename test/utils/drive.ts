import type { FakeTimeProvider } from '../../src/testing/index.js';

/**
 * Settles `promise` while its work travels over real sockets: lets the event loop turn, and when nothing
 * moves any more (and `mayAdvance` agrees), advances the fake clock to its next timer — a retry delay, a
 * timeout. Bounded: it gives up after `rounds` rounds and returns the promise as it is.
 */
export async function driveWithClock<T>(
  promise: Promise<T>,
  time: FakeTimeProvider,
  options: { mayAdvance?: () => boolean; turns?: number; rounds?: number } = {},
): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  const turns = options.turns ?? 30;
  for (let round = 0; round < (options.rounds ?? 200) && !settled; round++) {
    for (let i = 0; i < turns && !settled; i++) await new Promise((r) => setImmediate(r));
    if (!settled && (options.mayAdvance?.() ?? true) && time.pendingTimerCount > 0) {
      await time.advanceAsync(time.pendingDelays[0]);
    }
  }
  return promise;
}
