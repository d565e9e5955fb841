import { ResilienceContext } from '../context/resilience.context.js';
import { outcomeFromError, outcomeFromValue, type Outcome } from '../outcome/outcome.model.js';
import type {
  ResilienceStrategy,
  StrategyBuilderContext,
  StrategyNext,
  StrategyPorts,
} from '../strategy/resilience-strategy.interface.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import type { TimeProvider } from '../time/time.provider.js';
import { SlidingCounters } from '../utils/sliding-counters.js';
import { AdaptiveThrottlingRejectedError } from './adaptive-throttling.errors.js';
import {
  ADAPTIVE_THROTTLING_SEGMENTS,
  FleetWindow,
  type ThrottlingCounts,
} from './adaptive-throttling.fleet-window.js';
import {
  DEFAULT_ADAPTIVE_THROTTLING_K,
  DEFAULT_ADAPTIVE_THROTTLING_WINDOW,
  defaultSyncInterval,
  type AdaptiveThrottlingStrategyOptions,
} from './adaptive-throttling.options.js';
import { isOverloadRejection } from './adaptive-throttling.predicates.js';
import type { AdaptiveThrottlingPort, AdaptiveThrottlingStatistics } from './adaptive-throttling.state-provider.js';
import { isCancellation } from '../outcome/cancellation.rule.js';

declare module '../strategy/resilience-strategy.interface.js' {
  interface StrategyPorts {
    /** The figures of an adaptive throttling strategy. */
    readonly throttle?: AdaptiveThrottlingPort;
  }
}

declare module '../telemetry/resilience-event.model.js' {
  interface ResilienceEventMap {
    /** Adaptive throttling rejected a call locally. */
    OnAdaptiveThrottlingRejected: {
      readonly rejectProbability: number;
      readonly requests: number;
      readonly accepts: number;
    };
  }
}

const REQUESTS = 0;
const ACCEPTS = 1;

/**
 * The reject probability of the SRE book's client-side throttling, capped at `max`:
 * `max(0, (requests − k × accepts) / (requests + 1))`.
 *
 * @publicApi
 */
export function adaptiveThrottlingRejectProbability(requests: number, accepts: number, k: number, max = 1): number {
  const p = (requests - k * accepts) / (requests + 1);
  return p > 0 ? Math.min(p, max) : 0;
}

/**
 * The key a fleet shares a strategy's window under, unless `fleet.key` says otherwise:
 * `<pipeline>[:<instance key>]:<strategy name, or adaptive-throttling>`, with `%` and `:` percent-encoded in
 * each part (so pipeline `rpc:orders` and pipeline `rpc` with key `orders` never share a window).
 *
 * @publicApi
 */
export function defaultAdaptiveThrottlingKey(
  pipelineName: string | undefined,
  instanceName?: string,
  strategyName?: string,
): string {
  return [pipelineName ?? 'pipeline', instanceName, strategyName ?? 'adaptive-throttling']
    .filter((p) => p !== undefined)
    .map((p) => p.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A')))
    .join(':');
}

/**
 * Client-side adaptive throttling (Google SRE, "Handling Overload"): counts requests and the requests the
 * dependency accepted over a sliding window, and rejects a call locally with probability
 * `max(0, (requests − k × accepts) / (requests + 1))`. A rejected call is counted as a request, so a
 * dependency that refuses everything sees less and less traffic, yet never none. With `fleet`, the window
 * is the fleet's (see `FleetWindow`).
 *
 * @internal
 */
export class AdaptiveThrottlingStrategy<T> implements ResilienceStrategy<T>, AdaptiveThrottlingPort {
  readonly ports: StrategyPorts = { throttle: this };
  private readonly counters: ThrottlingCounts;
  private readonly fleet: FleetWindow | undefined;
  private readonly k: number;
  private readonly window: number;
  private readonly maxRejectProbability: number;
  private readonly random: () => number;
  private readonly time: TimeProvider;
  private readonly telemetry: StrategyTelemetry;
  private readonly reportsRejections: boolean;
  private throttled = 0;

  constructor(
    private readonly options: AdaptiveThrottlingStrategyOptions<T>,
    context: StrategyBuilderContext,
  ) {
    this.k = options.k ?? DEFAULT_ADAPTIVE_THROTTLING_K;
    this.window = options.window ?? DEFAULT_ADAPTIVE_THROTTLING_WINDOW;
    this.maxRejectProbability = options.maxRejectProbability ?? 1;
    this.random = options.random ?? context.random;
    this.time = context.timeProvider;
    this.telemetry = context.telemetry;
    this.reportsRejections = context.telemetry.wants('OnAdaptiveThrottlingRejected');
    const fleet = options.fleet;
    if (fleet) {
      this.fleet = new FleetWindow({
        store: fleet.store,
        key:
          fleet.key ?? defaultAdaptiveThrottlingKey(context.pipelineName, context.pipelineInstanceName, options.name),
        instance: globalThis.crypto.randomUUID(),
        window: this.window,
        syncInterval: fleet.syncInterval ?? defaultSyncInterval(this.window),
        time: this.time,
        onChange: (shared, error) => this.reportStore(shared, error),
      });
      this.counters = this.fleet;
    } else {
      this.counters = new SlidingCounters(ADAPTIVE_THROTTLING_SEGMENTS, this.window, 2);
    }
    options.stateProvider?._bind(this);
  }

  get statistics(): AdaptiveThrottlingStatistics {
    const counters = this.counters;
    // Reading the figures does not start a fleet's syncing (its first call does).
    if (this.fleet) this.fleet.slide(this.time.now());
    else counters.advance(this.time.now());
    const requests = counters.total(REQUESTS);
    const accepts = counters.total(ACCEPTS);
    return {
      requests,
      accepts,
      rejectProbability: adaptiveThrottlingRejectProbability(requests, accepts, this.k, this.maxRejectProbability),
      throttled: this.throttled,
      k: this.k,
      window: this.window,
      ...(this.fleet ? { shared: this.fleet.shared } : {}),
    };
  }

  /** Stops syncing a fleet's window (after sending what the store does not have yet). */
  dispose(): Promise<void> | undefined {
    return this.fleet?.dispose();
  }

  /** The fleet's window stopped (or started again) being used: once per change. */
  private reportStore(shared: boolean, error: unknown): void {
    const event = shared ? 'OnStateStoreRestored' : 'OnStateStoreUnavailable';
    if (!this.telemetry.wants(event)) return;
    this.telemetry.report(event, shared ? 'information' : 'error', new ResilienceContext(), { error });
  }

  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const counters = this.counters;
    counters.advance(this.time.now());
    const requests = counters.total(REQUESTS);
    const accepts = counters.total(ACCEPTS);
    counters.add(REQUESTS);
    if (requests > this.k * accepts) {
      const p = adaptiveThrottlingRejectProbability(requests, accepts, this.k, this.maxRejectProbability);
      if (this.random() < p) return this.reject(context, p, requests + 1, accepts);
    }
    // The default predicate needs no context: one pair of handlers serves every call (no closure per call).
    if (this.options.shouldHandle === undefined) return next(context).then(this.acceptValue, this.acceptError);
    return next(context).then(
      (value) => this.judge(outcomeFromValue(value), context).then(() => value),
      (error: unknown) =>
        this.judge(outcomeFromError(error), context).then(() => {
          throw error;
        }),
    );
  }

  /** A value is accepted unless it is a refusal (a 429 or 503 response). */
  private readonly acceptValue = (value: T): T => {
    if (!isOverloadRejection(value)) this.counters.add(ACCEPTS);
    return value;
  };

  /** A failure is accepted unless it is a refusal; a cancellation is never one. */
  private readonly acceptError = (error: unknown): never => {
    if (!isOverloadRejection(error) || isCancellation(error)) this.counters.add(ACCEPTS);
    throw error;
  };

  /** Counts an accept unless the user's predicate says the dependency refused the request. */
  private async judge(outcome: Outcome<T>, context: ResilienceContext): Promise<void> {
    const refused = await this.options.shouldHandle!({ outcome, context });
    if (!refused) this.counters.add(ACCEPTS);
  }

  private async reject(context: ResilienceContext, p: number, requests: number, accepts: number): Promise<never> {
    this.throttled++;
    const error = new AdaptiveThrottlingRejectedError(p, requests, accepts);
    error.source = {
      pipelineName: this.telemetry.source.pipelineName,
      strategyName: this.telemetry.source.strategyName,
    };
    if (this.reportsRejections) {
      this.telemetry.report('OnAdaptiveThrottlingRejected', 'warning', context, {
        rejectProbability: p,
        requests,
        accepts,
      });
    }
    if (this.options.onThrottled) await this.options.onThrottled({ context, rejectProbability: p, requests, accepts });
    throw error;
  }
}
