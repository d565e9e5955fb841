import { isCancellation } from '../outcome/cancellation.rule.js';
import { ResilienceContext } from '../context/resilience.context.js';
import { outcomeFromError, outcomeFromValue, unwrapOutcome, type Outcome } from '../outcome/outcome.model.js';
import { handleAllErrors } from '../outcome/outcome.predicates.js';
import type { InlineStrategy } from '../strategy/inline-strategy.interface.js';
import type {
  ResilienceStrategy,
  StrategyBuilderContext,
  StrategyNext,
  StrategyPorts,
} from '../strategy/resilience-strategy.interface.js';
import {
  BrokenCircuitError,
  createLightweightError,
  IsolatedCircuitError,
  type ResilienceErrorSource,
} from '../resilience.errors.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { getTimestamp, type TimeProvider, type TimerHandle } from '../time/time.provider.js';
import { isThenable } from '../utils/is-thenable.util.js';
import type { CircuitBreakerStateStore } from './circuit-breaker-state-store.interface.js';
import {
  DEFAULT_BREAK_DURATION,
  DEFAULT_CIRCUIT_BREAKER_KIND,
  DEFAULT_FAILURE_RATIO,
  DEFAULT_FAILURE_THRESHOLD,
  DEFAULT_MAX_HALF_OPEN_WAIT,
  DEFAULT_MINIMUM_THROUGHPUT,
  DEFAULT_PERMITTED_CALLS_IN_HALF_OPEN,
  DEFAULT_SAMPLING_DURATION,
  DEFAULT_SLOW_CALL_DURATION,
  DEFAULT_WINDOW_SIZE,
} from './circuit-breaker.constants.js';
import type { ManualControlTarget } from './circuit-breaker.manual-control.js';
import type { CircuitBreakerStrategyOptions } from './circuit-breaker.options.js';
import type { StateProviderTarget } from './circuit-breaker.state-provider.js';
import type {
  CircuitAcquireResult,
  CircuitCallResult,
  CircuitPermit,
  CircuitPolicy,
  CircuitSnapshot,
  CircuitState,
  CircuitTransition,
} from './circuit-state.model.js';
import { InMemoryCircuitBreakerStateStore } from './in-memory-circuit-breaker-state.store.js';

/**
 * The key of a breaker's circuit when none is given: `<pipeline>/<instance>/<strategy name>`. Everything
 * that must share a named pipeline's circuit derives its key here.
 *
 * @publicApi
 */
export function defaultCircuitKey(
  pipelineName: string | undefined,
  instanceName?: string,
  strategyName?: string,
): string {
  return [pipelineName ?? 'pipeline', instanceName, strategyName ?? 'circuit-breaker']
    .filter((p) => p !== undefined)
    .join('/');
}

/** Builds the serialisable policy a store applies from the user's options. @internal */
export function toCircuitPolicy(options: CircuitBreakerStrategyOptions<never>): CircuitPolicy {
  const permitted = options.permittedCallsInHalfOpen ?? DEFAULT_PERMITTED_CALLS_IN_HALF_OPEN;
  return {
    kind: options.kind ?? DEFAULT_CIRCUIT_BREAKER_KIND,
    failureThreshold: options.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD,
    failureRatio: options.failureRatio ?? DEFAULT_FAILURE_RATIO,
    minimumThroughput: options.minimumThroughput ?? DEFAULT_MINIMUM_THROUGHPUT,
    samplingDuration: options.samplingDuration ?? DEFAULT_SAMPLING_DURATION,
    windowSize: options.windowSize ?? DEFAULT_WINDOW_SIZE,
    breakDuration: options.breakDuration ?? DEFAULT_BREAK_DURATION,
    permittedCallsInHalfOpen: permitted,
    successThresholdInHalfOpen: options.successThresholdInHalfOpen ?? permitted,
    maxHalfOpenWait: options.maxHalfOpenWait ?? DEFAULT_MAX_HALF_OPEN_WAIT,
    breakDurationGenerator: options.breakDurationGenerator,
  };
}

/**
 * The circuit breaker: asks its store for a permit, runs the call, tells the store how it went, and
 * reports the transitions the store made. An in-memory store answers synchronously, so the closed path
 * adds a single promise hop.
 *
 * @internal
 */
/**
 * What inspection reads of a circuit breaker: where its circuit lives and the rules it applies, and how to
 * drive it by hand.
 *
 * @publicApi
 */
export interface CircuitPort {
  /** The circuit's key in its store (shared by every breaker that drives the same circuit). */
  readonly circuitKey: string;
  /** Where the circuit lives. */
  readonly store: CircuitBreakerStateStore;
  /** The rules the store applies. */
  readonly policy: CircuitPolicy;
  /** The state this process saw last. */
  readonly circuitState: CircuitState;
  /** The breaker's `name` option, when set. */
  readonly strategyName: string | undefined;
  /** Holds the circuit open until `close()`. */
  isolate(): Promise<void>;
  /** Closes (and resets) the circuit. */
  close(): Promise<void>;
}

declare module '../strategy/resilience-strategy.interface.js' {
  interface StrategyPorts {
    /** The circuit a circuit breaker drives. */
    readonly circuit?: CircuitPort;
  }
}

export class CircuitBreakerStrategy<T>
  implements ResilienceStrategy<T>, InlineStrategy<T>, ManualControlTarget, StateProviderTarget, CircuitPort
{
  readonly circuitKey: string;
  readonly ports: StrategyPorts = { circuit: this };
  circuitState: CircuitState = 'closed';
  lastHandledOutcome: Outcome<unknown> | undefined;

  readonly strategyName: string | undefined;
  /** @internal The rules the store applies (read by state inspection). */
  readonly policy: CircuitPolicy;
  /** @internal Where the circuit lives (read by state inspection). */
  readonly store: CircuitBreakerStateStore;
  private readonly time: TimeProvider;
  private readonly telemetry: StrategyTelemetry;
  /** Some listener wants `OnCircuitRejected` (one per rejected call). */
  private readonly reportsRejections: boolean;
  private readonly shouldHandle: NonNullable<CircuitBreakerStrategyOptions<T>['shouldHandle']>;
  private readonly handlesResults: boolean;
  private readonly slowCallDuration: number | undefined;
  /** The closed path may skip classification and timing: default predicate, not measuring slowness. */
  private readonly fastClosedPath: boolean;
  /**
   * Whether recording a success needs the clock: time windows do, and so does every shared store (it
   * orders outcomes of many processes by time); consecutive counting in memory does not.
   */
  private readonly successNeedsClock: boolean;
  private readonly source: ResilienceErrorSource;
  private openingFailure: unknown;
  private ready: Promise<void> | undefined;
  private readonly waiters = new Set<() => void>();
  private waitTimer: TimerHandle;
  private waitTimerDue = Infinity;
  private disposed = false;
  /** Detaches this breaker from its manual control (on dispose). */
  private detachControl: (() => void) | undefined;
  /** Recording failed and has not worked since: reported once until it does. */
  private storeFailing = false;

  constructor(
    /** @internal */
    readonly options: CircuitBreakerStrategyOptions<T>,
    context: StrategyBuilderContext,
  ) {
    this.strategyName = options.name;
    this.policy = toCircuitPolicy(options);
    this.store = options.stateStore ?? new InMemoryCircuitBreakerStateStore();
    this.circuitKey =
      options.circuitKey ?? defaultCircuitKey(context.pipelineName, context.pipelineInstanceName, options.name);
    this.time = context.timeProvider;
    this.telemetry = context.telemetry;
    this.reportsRejections = context.telemetry.wants('OnCircuitRejected');
    this.shouldHandle = options.shouldHandle ?? handleAllErrors;
    this.handlesResults = options.shouldHandle !== undefined;
    this.slowCallDuration =
      this.policy.kind === 'slow-call' ? (options.slowCallDuration ?? DEFAULT_SLOW_CALL_DURATION) : undefined;
    this.fastClosedPath = !this.handlesResults && this.slowCallDuration === undefined;
    this.successNeedsClock =
      // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent — an in-memory consecutive circuit ignores the time of a success; reading the clock anyway changes nothing but speed
      this.policy.kind !== 'consecutive' || !(this.store instanceof InMemoryCircuitBreakerStateStore);
    this.source = { pipelineName: context.pipelineName, strategyName: options.name };

    options.stateProvider?._bind(this);
    if (options.manualControl) {
      this.detachControl = options.manualControl._attach(this);
      if (options.manualControl.isIsolated) {
        const isolating = this.isolate();
        this.ready = isolating.then(() => {
          this.ready = undefined;
        });
      }
    }
  }

  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    if (this.ready) return this.ready.then(() => this.execute(next, context));
    const decision = this.store.acquire(this.circuitKey, this.policy, this.time.now());
    if (isThenable(decision)) return decision.then((d) => this.admit(d, next, context));
    return this.admit(decision, next, context);
  }

  /**
   * @internal A closed circuit with the default predicate runs inline: the permit is taken here and the
   * success recorded on exit. Any other decision takes the call through the full path.
   */
  inlineEnter(context: ResilienceContext, next: StrategyNext<T>): unknown {
    if (this.ready) return this.execute(next, context);
    const decision = this.store.acquire(this.circuitKey, this.policy, this.time.now());
    if (isThenable(decision)) return Promise.resolve(decision).then((d) => this.admit(d, next, context));
    const permit = decision.permit;
    if (decision.transition || permit === undefined || permit.probe || !this.fastClosedPath) {
      return this.admit(decision, next, context);
    }
    this.circuitState = decision.state;
    return permit;
  }

  /** @internal */
  inlineExitValue(permit: unknown): boolean {
    this.recordClosedSuccess(permit as CircuitPermit);
    return true;
  }

  /** @internal */
  inlineResume(permit: unknown, _next: StrategyNext<T>, context: ResilienceContext, inner: Promise<T>): Promise<T> {
    return inner.then(
      (value) => {
        this.recordClosedSuccess(permit as CircuitPermit);
        return value;
      },
      (error: unknown) => this.complete(permit as CircuitPermit, outcomeFromError(error), context, 0),
    );
  }

  async isolate(): Promise<void> {
    const transition = await this.store.isolate(this.circuitKey, this.policy, this.time.now());
    if (transition) await this.onTransition(transition, undefined, undefined, true);
  }

  async close(): Promise<void> {
    const transition = await this.store.close(this.circuitKey, this.policy, this.time.now());
    if (transition) await this.onTransition(transition, undefined, undefined, true);
  }

  /**
   * Stops waiting for verdicts (waiting callers re-apply once and are rejected if still not admitted) and
   * leaves its manual control, which then drives only the breakers still in use.
   */
  dispose(): void {
    this.disposed = true;
    this.detachControl?.();
    this.wakeWaiters();
  }

  async exportSnapshot(): Promise<CircuitSnapshot> {
    return this.store.exportSnapshot(this.circuitKey, this.policy);
  }

  async importSnapshot(snapshot: CircuitSnapshot): Promise<void> {
    await this.store.importSnapshot(this.circuitKey, this.policy, snapshot);
    this.circuitState = snapshot.state === 'half-open' ? 'open' : snapshot.state;
  }

  private admit(decision: CircuitAcquireResult, next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    this.circuitState = decision.state;
    if (decision.transition) {
      const reported = this.onTransition(decision.transition, context, undefined, false);
      if (reported) return reported.then(() => this.proceed(decision, next, context));
    }
    return this.proceed(decision, next, context);
  }

  private proceed(decision: CircuitAcquireResult, next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const permit = decision.permit;
    if (permit === undefined) return this.reject(decision, next, context);
    if (this.fastClosedPath && !permit.probe) {
      // The closed path: one promise hop, no outcome object, no timing.
      return next(context).then(
        (value) => {
          this.recordClosedSuccess(permit);
          return value;
        },
        (error: unknown) => this.complete(permit, outcomeFromError(error), context, 0),
      );
    }
    // Stryker disable next-line ConditionalExpression: equivalent — `true` reads the clock for a breaker that never compares durations
    const started = this.slowCallDuration !== undefined ? getTimestamp(this.time) : 0;
    return next(context).then(
      (value) => this.complete(permit, outcomeFromValue(value), context, started),
      (error: unknown) => this.complete(permit, outcomeFromError(error), context, started),
    );
  }

  private recordClosedSuccess(permit: CircuitPermit): void {
    const now = this.successNeedsClock ? this.time.now() : 0;
    let transition: ReturnType<CircuitBreakerStateStore['record']>;
    try {
      transition = this.store.record(this.circuitKey, this.policy, permit, 'success', now);
    } catch (error) {
      this.storeFailed(error, undefined);
      return;
    }
    // A success never changes a closed circuit's state, and the caller need not wait for a shared store.
    if (isThenable(transition)) transition.then(this.storeAnsweredLater, this.storeFailedLater);
    else if (this.storeFailing) this.storeAnswered(undefined);
  }

  private readonly storeAnsweredLater = (): void => {
    if (this.storeFailing) this.storeAnswered(undefined);
  };

  private readonly storeFailedLater = (error: unknown): void => this.storeFailed(error, undefined);

  /**
   * The store could not record an outcome (a custom store threw or rejected): the call's outcome stands,
   * as the call has run, and the first failure of a burst is reported (`OnStateStoreUnavailable`).
   */
  private storeFailed(error: unknown, context: ResilienceContext | undefined): void {
    if (this.storeFailing) return;
    this.storeFailing = true;
    // Stryker disable next-line ConditionalExpression: equivalent — an unwanted event reaches no listener
    if (this.telemetry.wants('OnStateStoreUnavailable')) {
      this.telemetry.report('OnStateStoreUnavailable', 'error', context ?? new ResilienceContext(), { error });
    }
  }

  /** The store records again after failing: reported once (`OnStateStoreRestored`). */
  private storeAnswered(context: ResilienceContext | undefined): void {
    this.storeFailing = false;
    // Stryker disable next-line ConditionalExpression: equivalent — an unwanted event reaches no listener
    if (this.telemetry.wants('OnStateStoreRestored')) {
      this.telemetry.report('OnStateStoreRestored', 'information', context ?? new ResilienceContext(), {
        error: undefined,
      });
    }
  }

  /** Classifies, records and reports; returns the outcome as the caller should see it. */
  private complete(
    permit: CircuitPermit,
    outcome: Outcome<T>,
    context: ResilienceContext,
    started: number,
  ): T | Promise<T> {
    const result = this.classify(outcome, context, started);
    if (isThenable(result)) return result.then((r) => this.apply(permit, r, outcome, context));
    return this.apply(permit, result, outcome, context);
  }

  private classify(
    outcome: Outcome<T>,
    context: ResilienceContext,
    started: number,
  ): CircuitCallResult | Promise<CircuitCallResult> {
    if (!outcome.ok && (context.isCancellationRequested || isCancellation(outcome.error, context))) return 'ignored';
    // Stryker disable next-line ConditionalExpression: equivalent — without a slowCallDuration the comparison with undefined is false anyway
    const slow = this.slowCallDuration !== undefined && getTimestamp(this.time) - started >= this.slowCallDuration;
    // Stryker disable next-line ConditionalExpression: equivalent — `false` asks the default predicate, which never handles a value
    if (outcome.ok && !this.handlesResults) return slow ? 'failure' : 'success';
    const handled = this.shouldHandle({ outcome, context });
    if (typeof handled === 'boolean') return handled || slow ? 'failure' : 'success';
    return Promise.resolve(handled).then((h) => (h || slow ? 'failure' : 'success'));
  }

  private apply(
    permit: CircuitPermit,
    result: CircuitCallResult,
    outcome: Outcome<T>,
    context: ResilienceContext,
  ): T | Promise<T> {
    if (result === 'failure') this.lastHandledOutcome = outcome;
    let transition: ReturnType<CircuitBreakerStateStore['record']>;
    try {
      transition = this.store.record(this.circuitKey, this.policy, permit, result, this.time.now());
    } catch (error) {
      return this.unrecorded(error, outcome, context);
    }
    if (isThenable(transition)) {
      return transition.then(
        (t) => this.afterRecord(t, outcome, context),
        (error: unknown) => this.unrecorded(error, outcome, context),
      );
    }
    return this.afterRecord(transition, outcome, context);
  }

  private unrecorded(error: unknown, outcome: Outcome<T>, context: ResilienceContext): T {
    this.storeFailed(error, context);
    return unwrapOutcome(outcome);
  }

  private afterRecord(
    transition: CircuitTransition | undefined,
    outcome: Outcome<T>,
    context: ResilienceContext,
  ): T | Promise<T> {
    if (this.storeFailing) this.storeAnswered(context);
    if (transition) {
      const reported = this.onTransition(transition, context, outcome, false);
      if (reported) return reported.then(() => unwrapOutcome(outcome));
    }
    return unwrapOutcome(outcome);
  }

  private reject(decision: CircuitAcquireResult, next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    let error: Error;
    if (decision.state === 'isolated') {
      error = createLightweightError(
        IsolatedCircuitError,
        `The circuit "${this.circuitKey}" is isolated: it admits no calls until it is closed by hand.`,
        {
          source: this.source,
        },
      );
    } else if (
      decision.state === 'half-open' &&
      this.options.waitForHalfOpenVerdict &&
      !this.disposed &&
      decision.verdictDueAt !== undefined
    ) {
      return this.waitForVerdict(decision.verdictDueAt, next, context);
    } else {
      const retryAfter = decision.retryAfter ?? this.policy.breakDuration;
      error = createLightweightError(
        BrokenCircuitError,
        decision.state === 'half-open'
          ? `The circuit "${this.circuitKey}" is half-open and its probe calls are taken; retry after ${retryAfter} ms.`
          : `The circuit "${this.circuitKey}" is open; it admits calls again in ${retryAfter} ms.`,
        { retryAfter, cause: this.openingFailure, source: this.source },
      );
    }
    // Stryker disable next-line ConditionalExpression: equivalent — an unwanted event reaches no listener
    if (this.reportsRejections) {
      this.telemetry.report('OnCircuitRejected', 'debug', context, {
        state: decision.state === 'closed' ? 'open' : decision.state,
        retryAfter: (error as { retryAfter?: number }).retryAfter,
      });
    }
    // Rejecting once the caller has attached its handler avoids Node's unhandled-rejection bookkeeping,
    // which costs more than the whole rest of a rejection.
    return new Promise<T>((_, rejectCall) => queueMicrotask(() => rejectCall(error)));
  }

  private waitForVerdict(verdictDueAt: number, next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    if (context.isCancellationRequested) return Promise.reject(context._scope.reason);
    return new Promise<T>((resolve, reject) => {
      let signal: AbortSignal | undefined;
      const onAbort = (): void => {
        this.waiters.delete(wake);
        if (this.waiters.size === 0) this.disarmWaitTimer();
        reject(context._scope.reason);
      };
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(this.execute(next, context));
      };
      this.waiters.add(wake);
      // Stryker disable next-line ConditionalExpression: equivalent — listening on a signal that can never abort changes nothing
      if (context._scope.canAbort) {
        signal = context.signal;
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent — an abort event fires at most once; `once` only frees the listener sooner
        signal.addEventListener('abort', onAbort, { once: true });
      }
      this.armWaitTimer(verdictDueAt);
    });
  }

  private armWaitTimer(due: number): void {
    // No timer is armed while waitTimerDue is Infinity.
    // Stryker disable next-line EqualityOperator: equivalent — `<` re-arms a timer for the same due time, still one timer
    if (this.waitTimerDue <= due) return;
    this.disarmWaitTimer();
    this.waitTimerDue = due;
    this.waitTimer = this.time.setTimeout(
      () => {
        this.waitTimer = undefined;
        this.waitTimerDue = Infinity;
        this.wakeWaiters();
      },
      Math.max(0, due - this.time.now()),
    );
  }

  private disarmWaitTimer(): void {
    // Stryker disable next-line ConditionalExpression: equivalent — clearing no timer is a no-op
    if (this.waitTimer === undefined) return;
    this.time.clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    this.waitTimerDue = Infinity;
  }

  private wakeWaiters(): void {
    // Stryker disable next-line ConditionalExpression: equivalent — waking no waiter is a no-op
    if (this.waiters.size === 0) return;
    const waiters = [...this.waiters];
    this.waiters.clear();
    this.disarmWaitTimer();
    for (const wake of waiters) wake();
  }

  /** Reports a transition: state, telemetry, callbacks, waiters. Returns a promise only if a callback did. */
  private onTransition(
    transition: CircuitTransition,
    context: ResilienceContext | undefined,
    outcome: Outcome<T> | undefined,
    isManual: boolean,
  ): Promise<void> | undefined {
    const { from, to, reason } = transition;
    this.circuitState = to;
    // The handled outcome that opened the circuit (an error or a result shouldHandle judged); only an error
    // becomes the cause of later rejections.
    if (to === 'open') this.openingFailure = outcome && !outcome.ok ? outcome.error : undefined;
    if (to === 'closed') this.openingFailure = undefined;

    const pending: PromiseLike<void>[] = [];
    const call = <A>(callback: ((args: A) => void | PromiseLike<void>) | undefined, args: A): void => {
      // Stryker disable next-line ConditionalExpression: equivalent — calling an absent callback throws, and the throw is swallowed below
      if (!callback) return;
      try {
        const result = callback(args);
        if (isThenable(result)) pending.push(Promise.resolve(result).then(undefined, () => undefined));
      } catch {
        // A callback must never break the call that triggered the transition.
      }
    };

    if (this.telemetry.enabled && context) {
      if (to === 'open') {
        this.telemetry.report('OnCircuitOpened', 'error', context, {
          breakDuration: transition.breakDuration ?? 0,
          reason,
          outcome,
          health: transition.health,
        });
      } else if (to === 'closed') {
        this.telemetry.report('OnCircuitClosed', 'information', context, { reason });
      } else {
        // A call's transitions lead to open, closed or half-open; only manual ones (no context) isolate.
        this.telemetry.report('OnCircuitHalfOpened', 'warning', context, {});
      }
    }
    call(this.options.onStateChange, { from, to, reason, context });
    if (to === 'open' || to === 'isolated') {
      // Isolated by hand: no call is under way, and the circuit stays open until it is closed by hand.
      call(this.options.onOpened, {
        context: context ?? new ResilienceContext(),
        outcome,
        breakDuration: to === 'isolated' ? Infinity : (transition.breakDuration ?? 0),
        reason,
        health: transition.health,
        isManual,
      });
    } else if (to === 'closed') {
      call(this.options.onClosed, { context, outcome, reason, isManual });
    } else {
      // Half-open: only a call's admission (with its context) lets the probes through.
      call(this.options.onHalfOpened, { context: context! });
    }
    // Callers waiting for a half-open verdict re-apply for a permit after any change.
    this.wakeWaiters();
    if (pending.length === 0) return undefined;
    return Promise.all(pending).then(() => undefined);
  }
}
