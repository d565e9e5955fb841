/**
 * Counters over a sliding time window, kept in a ring of segments (a sliding-window rate limit, a retry
 * budget). Time is read from the caller: `advance(now)` clears the segments that left the window; totals
 * are kept as counts are added, so reading them is O(1).
 *
 * @internal
 */
export class SlidingCounters {
  readonly segmentDuration: number;
  private readonly counts: Float64Array;
  private readonly totals: Float64Array;
  private current = 0;
  private start: number | undefined;

  constructor(
    private readonly segments: number,
    window: number,
    private readonly width = 1,
  ) {
    this.segmentDuration = window / segments;
    this.counts = new Float64Array(segments * width);
    this.totals = new Float64Array(width);
  }

  /** Moves the window to `now`: the first call starts it there. */
  advance(now: number): void {
    if (this.start === undefined) {
      this.start = now;
      return;
    }
    const steps = Math.floor((now - this.start) / this.segmentDuration);
    // A clock that stepped back moves nothing (the window never slides backwards).
    if (steps < 1) return;
    for (let i = 0; i < Math.min(steps, this.segments); i++) {
      this.current = (this.current + 1) % this.segments;
      for (let c = 0; c < this.width; c++) {
        this.totals[c] -= this.counts[this.current * this.width + c];
        this.counts[this.current * this.width + c] = 0;
      }
    }
    this.start += steps * this.segmentDuration;
  }

  /** Adds to a counter in the current segment. */
  add(counter = 0, amount = 1): void {
    this.counts[this.current * this.width + counter] += amount;
    this.totals[counter] += amount;
  }

  /** A counter's total over the window. */
  total(counter = 0): number {
    return this.totals[counter];
  }

  /** The count in the segment `age` steps old (0: the current one), of a window with one counter. */
  at(age: number): number {
    return this.counts[(this.current - age + this.segments) % this.segments];
  }

  /** When the segment `age` steps old leaves the window. */
  leavesAt(age: number): number {
    return (this.start ?? 0) + (this.segments - age) * this.segmentDuration;
  }

  /** When the current segment ends. */
  get currentEndsAt(): number {
    return (this.start ?? 0) + this.segmentDuration;
  }
}
