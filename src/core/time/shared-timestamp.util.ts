import { getTimestamp, type TimeProvider } from './time.provider.js';

/**
 * One duration timestamp handed between a pipeline's own telemetry and the strategy right after it
 * (its outermost one), within one inline run, so that two durations that start or end at the same
 * instant read the clock once: the pipeline's start is the start of an outermost retry's first attempt,
 * and that attempt's end is the pipeline's end. Reading the clock costs about as much as the rest of a
 * strategy's bookkeeping, and the pipeline and attempt durations would read it four times per call.
 *
 * An offer names the strategy it is for (on the way in) or from (on the way out) and the clock that read
 * it; it is taken only by that strategy, for that clock. The inline run withdraws any offer before it
 * calls the rest of the pipeline and when its exit loop ends, so no offer is taken after an `await` or
 * by a pipeline nested in the callback: a taken timestamp is off by the synchronous bookkeeping between
 * the two strategies (nanoseconds).
 *
 * @internal
 */
let offeredParty: object | undefined;
let offeredClock: TimeProvider | undefined;
let offered = 0;

/** Offers `timestamp`, read from `time`, to (or from) `party`. @internal */
export function offerTimestamp(party: object, time: TimeProvider, timestamp: number): void {
  offeredParty = party;
  offeredClock = time;
  offered = timestamp;
}

/** Withdraws the offered timestamp, if any. @internal */
export function withdrawTimestamp(): void {
  offeredParty = undefined;
}

/** The timestamp on offer to (or from) `party` for `time`, taking it, or else one read now. @internal */
export function takeTimestamp(party: object, time: TimeProvider): number {
  if (offeredParty === party && offeredClock === time) {
    offeredParty = undefined;
    return offered;
  }
  return getTimestamp(time);
}
