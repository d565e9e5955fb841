/** The figures of an adaptive throttling strategy, as they are now. @publicApi */
export interface AdaptiveThrottlingStatistics {
  /** Requests counted in the window (those rejected locally included). */
  readonly requests: number;
  /** Requests the dependency accepted in the window. */
  readonly accepts: number;
  /** The probability the next call is rejected with: `max(0, (requests − k × accepts) / (requests + 1))`, capped. */
  readonly rejectProbability: number;
  /** Calls rejected locally since the strategy was created. */
  readonly throttled: number;
  /** The strategy's K. */
  readonly k: number;
  /** The window, in milliseconds. */
  readonly window: number;
  /**
   * With `fleet` only: true while the figures are the fleet's (its counts at the last sync plus this
   * instance's since), false while they are this instance's own — before the first sync succeeds and
   * while the store cannot be reached.
   */
  readonly shared?: boolean;
}

/** What inspection reads of one adaptive throttling strategy (its port). @publicApi */
export interface AdaptiveThrottlingPort {
  /** The strategy's figures now. */
  readonly statistics: AdaptiveThrottlingStatistics;
}

/**
 * Reads the figures of one adaptive throttling strategy (give it to exactly one, as its `stateProvider`
 * option): requests and accepts in the window, and the probability the next call is rejected with.
 *
 * @publicApi
 */
export class AdaptiveThrottlingStateProvider {
  private target: AdaptiveThrottlingPort | undefined;

  /** True once a strategy uses this provider. */
  get isInitialized(): boolean {
    return this.target !== undefined;
  }

  /** The strategy's figures now; all zero before a strategy uses this provider. */
  get statistics(): AdaptiveThrottlingStatistics {
    return this.target?.statistics ?? { requests: 0, accepts: 0, rejectProbability: 0, throttled: 0, k: 0, window: 0 };
  }

  /** @internal */
  _bind(target: AdaptiveThrottlingPort): void {
    if (this.target) {
      throw new Error('This AdaptiveThrottlingStateProvider is already used by another adaptive throttling strategy.');
    }
    this.target = target;
  }
}
