import type { CircuitPolicy, TimeProvider, TimerHandle } from '../core/index.js';

/**
 * The most distinct milliseconds one batch carries exactly; later successes of a fuller batch are counted
 * at the time of the newest one (a few ms later than they happened, never earlier).
 *
 * @internal
 */
export const MAX_BATCH_TIMES = 64;

/** Successes of one circuit not yet sent: the permit's generation and `[time, count]` groups, oldest first. */
interface Batch {
  policy: CircuitPolicy;
  generation: number;
  times: number[];
  counts: number[];
  total: number;
}

/** What a script call carries: the generation and the groups as `time:count,time:count`. @internal */
export interface SuccessPayload {
  readonly generation: number;
  readonly groups: string;
}

/**
 * Closed-path successes never change a circuit's state, so they are not sent on their own: they wait
 * here, each with the time it happened, and ride with the circuit's next script call — or are flushed
 * after `flushInterval`. The script places each success at its own time, so a success that arrives after
 * failures recorded later elsewhere does not erase them.
 *
 * @internal
 */
export class SuccessBatcher {
  private readonly batches = new Map<string, Batch>();
  private timer: TimerHandle;
  private timing = false;

  constructor(
    private readonly options: {
      readonly flushAfter: number;
      readonly time: TimeProvider;
      /** Sends every waiting batch (the timer fired); taking them all (`takeAll`) ends the timer. */
      readonly flush: () => void;
    },
  ) {}

  /**
   * Adds one success of `generation`, at `at`. A batch of an older generation is dropped, and so is a success
   * of an older generation than the batch's (void anyway: the script counts only the current generation).
   */
  add(key: string, policy: CircuitPolicy, generation: number, at: number): void {
    let batch = this.batches.get(key);
    if (batch && generation < batch.generation) return;
    if (!batch || batch.generation !== generation) {
      batch = { policy, generation, times: [], counts: [], total: 0 };
      this.batches.set(key, batch);
    }
    const last = batch.times.length - 1;
    if (last >= 0 && (at <= batch.times[last] || policy.kind === 'consecutive' || last + 1 >= MAX_BATCH_TIMES)) {
      // Same millisecond (or a clock step back), a consecutive count (only the newest success matters), or a
      // full batch: counted with the newest group, at the newest time.
      batch.counts[last]++;
      batch.times[last] = Math.max(batch.times[last], at);
    } else {
      batch.times.push(at);
      batch.counts.push(1);
    }
    batch.total++;
    // A count window keeps only its last `windowSize` outcomes: older successes of the batch could never
    // stay in it, so they are not carried.
    if (policy.kind === 'count-window') {
      while (batch.total > policy.windowSize) {
        const drop = Math.min(batch.counts[0], batch.total - policy.windowSize);
        batch.counts[0] -= drop;
        batch.total -= drop;
        if (batch.counts[0] === 0) {
          batch.counts.shift();
          batch.times.shift();
        }
      }
    }
    if (!this.timing) {
      this.timing = true;
      this.timer = this.options.time.setTimeout(() => this.options.flush(), this.options.flushAfter);
      (this.timer as { unref?: () => void } | undefined)?.unref?.();
    }
  }

  /** Removes and returns the batch of a circuit, encoded for the script. */
  take(key: string): SuccessPayload | undefined {
    const batch = this.batches.get(key);
    if (!batch) return undefined;
    this.batches.delete(key);
    return encode(batch);
  }

  /** Removes and returns every batch, and stops the timer. */
  takeAll(): { key: string; policy: CircuitPolicy; payload: SuccessPayload }[] {
    this.stop();
    const all = [...this.batches.entries()].map(([key, batch]) => ({
      key,
      policy: batch.policy,
      payload: encode(batch),
    }));
    this.batches.clear();
    return all;
  }

  stop(): void {
    if (this.timing) this.options.time.clearTimeout(this.timer);
    this.timing = false;
  }
}

function encode(batch: Batch): SuccessPayload {
  return { generation: batch.generation, groups: batch.times.map((t, i) => `${t}:${batch.counts[i]}`).join(',') };
}
