import type { TimeProvider, TimerHandle } from '../time/time.provider.js';
import type {
  AdaptiveThrottlingBucketCounts,
  AdaptiveThrottlingStore,
  AdaptiveThrottlingSyncRequest,
} from './adaptive-throttling.store.js';

/** The window is kept in this many buckets (segments): it slides by a twentieth of its length. @internal */
export const ADAPTIVE_THROTTLING_SEGMENTS = 20;

const S = ADAPTIVE_THROTTLING_SEGMENTS;

/** Requests and accepts over a window, as the strategy reads them on every call. @internal */
export interface ThrottlingCounts {
  /** Moves the window to `now`. */
  advance(now: number): void;
  /** Adds one to counter 0 (requests) or 1 (accepts), in the current bucket. */
  add(counter: number): void;
  /** Counter 0 (requests) or 1 (accepts) over the window. */
  total(counter: number): number;
}

/** @internal */
export interface FleetWindowOptions {
  readonly store: AdaptiveThrottlingStore;
  readonly key: string;
  readonly instance: string;
  readonly window: number;
  readonly syncInterval: number;
  readonly time: TimeProvider;
  /** The window switched to the fleet's counts (`true`) or back to this process's own (`false`). */
  readonly onChange: (shared: boolean, error: unknown) => void;
}

/**
 * A window shared by a fleet through an `AdaptiveThrottlingStore`. Calls only touch memory: each
 * instance counts its requests and accepts per bucket (buckets are numbered by the time, so every instance
 * numbers them alike), and every `syncInterval` sends the totals of the buckets that changed and reads the
 * fleet's. What a call sees is the fleet's counts from the last sync plus what this instance counted since
 * — or, until a first sync succeeds and while the store fails, this instance's own counts.
 *
 * @internal
 */
export class FleetWindow implements ThrottlingCounts {
  private readonly bucketDuration: number;
  private readonly ttl: number;
  /** Per slot (bucket modulo S): the bucket it holds, this instance's counts, what the store has of them, the fleet's. */
  private readonly buckets = new Float64Array(S).fill(-Infinity);
  private readonly own = new Float64Array(2 * S);
  private readonly acked = new Float64Array(2 * S);
  private readonly fleet = new Float64Array(2 * S);
  /** This instance's counts over the window, and the fleet's view (fleet + own − acked). */
  private readonly ownTotals = new Float64Array(2);
  private readonly viewTotals = new Float64Array(2);
  private current = -Infinity;
  private slot = 0;
  private state: 'starting' | 'shared' | 'local' = 'starting';
  private started = false;
  private inFlight = false;
  /** Ticks that found the last sync still unanswered. */
  private unanswered = 0;
  private disposed = false;
  private timer: TimerHandle;

  constructor(private readonly options: FleetWindowOptions) {
    this.bucketDuration = options.window / S;
    this.ttl = Math.ceil(options.window + this.bucketDuration);
  }

  /** True while calls see the fleet's counts. */
  get shared(): boolean {
    return this.state === 'shared';
  }

  /** Moves the window to `now`; the first call starts syncing (a strategy only built to validate never does). */
  advance(now: number): void {
    if (!this.started) {
      this.started = true;
      this.schedule();
      void this.sync();
    }
    this.slide(now);
  }

  /** Moves the window to `now`. */
  slide(now: number): void {
    const bucket = Math.floor(now / this.bucketDuration);
    // Same bucket, or a clock that stepped back: the window never slides backwards.
    if (bucket <= this.current) return;
    this.current = bucket;
    const first = bucket - S + 1;
    const buckets = this.buckets;
    for (let i = 0; i < S; i++) if (buckets[i] < first) this.clear(i, -Infinity);
    this.slot = this.claim(bucket);
    this.recount();
  }

  add(counter: number): void {
    this.own[2 * this.slot + counter]++;
    this.ownTotals[counter]++;
    this.viewTotals[counter]++;
  }

  total(counter: number): number {
    return this.state === 'shared' ? this.viewTotals[counter] : this.ownTotals[counter];
  }

  /** Stops syncing; sends the counts the store does not have yet, once (unless a sync is still out). */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    if (!this.started) return;
    this.options.time.clearTimeout(this.timer);
    if (!this.inFlight && this.dirty().length > 0) await this.sync(true);
  }

  private schedule(): void {
    this.timer = this.options.time.setTimeout(() => this.tick(), this.options.syncInterval);
    // Never keeps the process alive on its own.
    (this.timer as { unref?: () => void } | undefined)?.unref?.();
  }

  private tick(): void {
    if (this.disposed) return;
    this.schedule();
    if (this.inFlight) {
      // The last sync has not answered for two intervals: the view is too old to decide with.
      if (++this.unanswered === 2) {
        this.change('local', new Error(`no answer from the store within ${2 * this.options.syncInterval} ms`));
      }
      return;
    }
    void this.sync();
  }

  /** The slots whose counts the store does not have yet. */
  private dirty(): number[] {
    const slots: number[] = [];
    const first = this.current - S + 1;
    for (let i = 0; i < S; i++) {
      if (this.buckets[i] < first) continue;
      if (this.own[2 * i] !== this.acked[2 * i] || this.own[2 * i + 1] !== this.acked[2 * i + 1]) slots.push(i);
    }
    return slots;
  }

  private async sync(final = false): Promise<void> {
    this.slide(this.options.time.now());
    const slots = this.dirty();
    const counts: AdaptiveThrottlingBucketCounts[] = slots.map((i) => ({
      bucket: this.buckets[i],
      requests: this.own[2 * i],
      accepts: this.own[2 * i + 1],
    }));
    const request: AdaptiveThrottlingSyncRequest = {
      key: this.options.key,
      instance: this.options.instance,
      firstBucket: this.current - S + 1,
      lastBucket: this.current,
      ttl: this.ttl,
      counts,
    };
    this.inFlight = true;
    this.unanswered = 0;
    let answer: readonly AdaptiveThrottlingBucketCounts[];
    try {
      answer = await this.options.store.sync(request);
    } catch (error) {
      this.inFlight = false;
      if (!final) this.change('local', error);
      return;
    }
    this.inFlight = false;
    if (final) return;
    // What was sent is in the store now (where the slot still holds that bucket).
    for (const { bucket, requests, accepts } of counts) {
      const i = slotOf(bucket);
      if (this.buckets[i] !== bucket) continue;
      this.acked[2 * i] = Math.max(this.acked[2 * i], requests);
      this.acked[2 * i + 1] = Math.max(this.acked[2 * i + 1], accepts);
    }
    // The fleet's counts of every bucket asked for that is still in the window (absent from the answer: none).
    const answered = new Map<number, AdaptiveThrottlingBucketCounts>();
    for (const counts of answer) answered.set(counts.bucket, counts);
    for (let b = request.firstBucket; b <= request.lastBucket; b++) {
      const i = this.claim(b);
      if (i < 0) continue;
      const counts = answered.get(b);
      this.fleet[2 * i] = counts === undefined ? 0 : Number(counts.requests);
      this.fleet[2 * i + 1] = counts === undefined ? 0 : Number(counts.accepts);
      // A store holding less than this instance sent has lost it (a Redis restarted empty, a key gone):
      // the bucket is sent again with the next sync, and counted from memory meanwhile.
      if (this.fleet[2 * i] < this.acked[2 * i] || this.fleet[2 * i + 1] < this.acked[2 * i + 1]) {
        this.acked[2 * i] = 0;
        this.acked[2 * i + 1] = 0;
      }
    }
    this.recount();
    this.change('shared', undefined);
  }

  private change(state: 'shared' | 'local', error: unknown): void {
    if (this.disposed || this.state === state) return;
    const before = this.state;
    this.state = state;
    // The first answer starts sharing; nothing was lost before it.
    if (before === 'starting' && state === 'shared') return;
    this.options.onChange(state === 'shared', error);
  }

  /** The slot of `bucket`, taken over from an older bucket that left the window if need be; -1 when `bucket` has left it. */
  private claim(bucket: number): number {
    const i = slotOf(bucket);
    if (this.buckets[i] === bucket) return i;
    if (this.buckets[i] > bucket || bucket < this.current - S + 1) return -1;
    this.clear(i, bucket);
    return i;
  }

  private clear(i: number, bucket: number): void {
    this.buckets[i] = bucket;
    for (const counts of [this.own, this.acked, this.fleet]) {
      counts[2 * i] = 0;
      counts[2 * i + 1] = 0;
    }
  }

  private recount(): void {
    const first = this.current - S + 1;
    let ownRequests = 0;
    let ownAccepts = 0;
    let viewRequests = 0;
    let viewAccepts = 0;
    for (let i = 0; i < S; i++) {
      if (this.buckets[i] < first) continue;
      ownRequests += this.own[2 * i];
      ownAccepts += this.own[2 * i + 1];
      viewRequests += this.fleet[2 * i] + this.own[2 * i] - this.acked[2 * i];
      viewAccepts += this.fleet[2 * i + 1] + this.own[2 * i + 1] - this.acked[2 * i + 1];
    }
    this.ownTotals[0] = ownRequests;
    this.ownTotals[1] = ownAccepts;
    this.viewTotals[0] = viewRequests;
    this.viewTotals[1] = viewAccepts;
  }
}

function slotOf(bucket: number): number {
  return ((bucket % S) + S) % S;
}
