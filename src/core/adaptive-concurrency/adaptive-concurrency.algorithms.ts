/**
 * How the adaptive limit moves. The limiter gathers finished calls into windows of `windowSize`
 * samples; at the end of each window the algorithm sees the window's figures and returns the new
 * (fractional) limit, which the limiter bounds to `[minLimit, maxLimit]` and uses rounded down.
 */

/** The figures of one window of finished calls. @internal */
export interface LimitWindow {
  /** The average round-trip time of the window's calls, in milliseconds (the short-window RTT). */
  readonly rtt: number;
  /** The most calls that were in flight at once while the window filled. */
  readonly maxInFlight: number;
  /** Whether a call of the window was dropped (timed out, rejected downstream, or slower than `slowCallDuration` for AIMD). */
  readonly dropped: boolean;
}

/** One limit algorithm, fed one window at a time. @internal */
export interface LimitAlgorithm {
  /** The new limit (fractional) after `window`, from the current `limit`. */
  update(limit: number, window: LimitWindow): number;
  /** The long-window RTT (Gradient2) in milliseconds, when the algorithm keeps one. */
  readonly longRtt: number | undefined;
}

/**
 * An exponential moving average over `window` samples, a plain average for its first `warmup` samples
 * (so the first figures are not pulled towards zero).
 *
 * @internal
 */
export class MovingAverage {
  private count = 0;
  private sum = 0;
  private current = 0;
  private readonly factor: number;

  constructor(
    window: number,
    private readonly warmup: number,
  ) {
    this.factor = 2 / (window + 1);
  }

  get value(): number {
    return this.current;
  }

  add(sample: number): number {
    if (this.count < this.warmup) {
      this.count++;
      this.sum += sample;
      this.current = this.sum / this.count;
    } else {
      this.current = this.current * (1 - this.factor) + sample * this.factor;
    }
    return this.current;
  }

  /** Scales the average (Gradient2 decays a baseline left high by a past overload). */
  scale(by: number): void {
    this.current *= by;
  }
}

/** Options of the Gradient2 algorithm. @internal */
export interface Gradient2Settings {
  readonly longWindow: number;
  readonly smoothing: number;
  readonly tolerance: number;
  readonly growth: number;
}

/**
 * Gradient2 (after Netflix's concurrency-limits): compares the short-window RTT with a long-window
 * baseline. While the short one stays within `tolerance ×` the baseline the limit grows by `growth` per
 * window; when it rises above, the limit shrinks in proportion (by at most half per window). Each new
 * estimate is blended in with `smoothing`. A limit that is not used (fewer than half of it in flight)
 * does not move. A baseline left more than twice the short RTT by a past overload decays by 10 % a
 * window, so the limiter finds its way back once latency is normal again.
 *
 * @internal
 */
export class Gradient2Algorithm implements LimitAlgorithm {
  private readonly baseline: MovingAverage;

  constructor(private readonly settings: Gradient2Settings) {
    this.baseline = new MovingAverage(settings.longWindow, 10);
  }

  get longRtt(): number {
    return this.baseline.value;
  }

  update(limit: number, window: LimitWindow): number {
    const short = window.rtt;
    const long = this.baseline.add(short);
    if (short > 0 && long / short > 2) this.baseline.scale(0.9);
    if (window.maxInFlight < limit / 2) return limit; // the limit is not what holds callers back
    const gradient = short > 0 ? Math.max(0.5, Math.min(1, (this.settings.tolerance * long) / short)) : 1;
    const estimate = limit * gradient + this.settings.growth;
    return limit * (1 - this.settings.smoothing) + estimate * this.settings.smoothing;
  }
}

/** Options of the AIMD algorithm. @internal */
export interface AimdSettings {
  readonly backoffRatio: number;
  readonly slowCallDuration: number;
}

/**
 * Additive increase, multiplicative decrease (as TCP's congestion window): a window with a drop, or
 * whose average RTT is above `slowCallDuration`, multiplies the limit by `backoffRatio` (at least one
 * less); a window that used at least half of the limit adds one.
 *
 * @internal
 */
export class AimdAlgorithm implements LimitAlgorithm {
  readonly longRtt = undefined;

  constructor(private readonly settings: AimdSettings) {}

  update(limit: number, window: LimitWindow): number {
    if (window.dropped || window.rtt > this.settings.slowCallDuration) {
      return Math.min(limit - 1, Math.floor(limit * this.settings.backoffRatio));
    }
    if (window.maxInFlight * 2 >= limit) return limit + 1;
    return limit;
  }
}
