import {
  CancellationScope,
  ExternalCancellationScope,
  NoCancellationScope,
  SourceCancellationScope,
  type CancellationSource,
} from './cancellation.scope.js';
import { ResilienceProperties } from './resilience-property.key.js';

/** What a caller may pass instead of a ready-made context. @publicApi */
export interface ResilienceContextOptions {
  /** Names the operation in telemetry and logs (Polly's `OperationKey`). */
  operationKey?: string;
  /** Cancels the execution: every strategy and the callback observe it. */
  signal?: AbortSignal;
  /**
   * Cancels the execution like `signal`, but lazily: strategies read `aborted` and `reason` on every
   * check and `signal` only when somebody needs an `AbortSignal`, so a source that creates its signal on
   * first read costs nothing for a callback that never looks at one. Takes precedence over `signal`.
   */
  cancellation?: CancellationSource;
  /** Initial properties; the bag is shared, not copied. */
  properties?: ResilienceProperties;
  /**
   * The time (per the pipeline's clock, `timeProvider.now()`) by which the whole execution must end —
   * typically `now + the budget the caller has left`. A pipeline rejects the call with
   * `DeadlineExceededError` if it has passed when the call starts, aborts `signal` when it passes, and
   * every strategy inside sees it as `deadline` (a retry never starts an attempt past it). `undefined`,
   * `NaN` or `Infinity`: no deadline.
   */
  deadline?: number;
}

/**
 * The function a pipeline executes. It may return a value or a promise. `state` is what the caller
 * passed to `execute` with it, so one function can serve every call without a closure per call.
 *
 * @publicApi
 */
export type ResilienceCallback<R, S = void> = (context: ResilienceContext, state: S) => R | PromiseLike<R>;

/**
 * The execution-scoped state that travels with one call through every strategy of a pipeline:
 * the operation key, a cancellation signal, typed properties and the current attempt number.
 *
 * @publicApi
 */
export class ResilienceContext {
  /** Names the operation in telemetry and logs. */
  operationKey: string | undefined;
  /** The attempt being executed: 0 for the original call, 1 for the first retry or hedge, … */
  attemptNumber = 0;

  /** @internal The cancellation scope the current strategy runs under. */
  _scope: CancellationScope;
  /** @internal The user's callback, read by the innermost component. */
  _callback: ResilienceCallback<unknown, unknown> | undefined = undefined;
  /**
   * @internal The state passed to `execute` with the callback, handed to it on every attempt. Left
   * unset (no property on the object) unless a caller passes state, so contexts stay as small as before.
   */
  _state: unknown;
  /** @internal The time (per the pipeline's clock) by which an enclosing timeout ends the call. */
  _deadline = Infinity;
  /**
   * @internal The caller's deadline (`ResilienceContextOptions.deadline`) that the next execution arms
   * (a timer that aborts the scope); `undefined` while an execution has it armed, and for contexts
   * without one — left unset (no property on the object) unless a caller gives a deadline.
   */
  _pendingDeadline: number | undefined;
  private bag: ResilienceProperties | undefined;

  constructor(options?: ResilienceContextOptions) {
    this.operationKey = options?.operationKey;
    this.bag = options?.properties;
    const deadline = options?.deadline;
    if (typeof deadline === 'number' && deadline < Infinity) this._deadline = this._pendingDeadline = deadline;
    const signal = options?.signal;
    const cancellation = options?.cancellation;
    this._scope = cancellation
      ? new SourceCancellationScope(cancellation)
      : signal
        ? new ExternalCancellationScope(signal)
        : NoCancellationScope.instance;
  }

  /** Aborts when the caller cancels or an enclosing strategy (a timeout, a losing hedge) gives up. */
  get signal(): AbortSignal {
    if (this._scope === NoCancellationScope.instance) {
      this._scope = new ExternalCancellationScope(new AbortController().signal);
    }
    return this._scope.signal;
  }

  /**
   * The earliest deadline in force for the code running now, per the pipeline's clock: the caller's
   * (`ResilienceContextOptions.deadline`) or an enclosing timeout's, whichever ends first; `Infinity`
   * when there is none. `deadline - timeProvider.now()` is the budget left, which a client passes on to
   * the service it calls.
   */
  get deadline(): number {
    return this._deadline;
  }

  /** True once `signal` has aborted; reading this never allocates a signal. */
  get isCancellationRequested(): boolean {
    return this._scope.aborted;
  }

  /** The typed property bag. */
  get properties(): ResilienceProperties {
    return (this.bag ??= new ResilienceProperties());
  }

  /** True when a property bag exists (reading `properties` creates one). */
  get hasProperties(): boolean {
    return this.bag !== undefined && this.bag.size > 0;
  }

  /**
   * A copy for an attempt that runs beside this one (as hedging runs each attempt): the same operation
   * key, attempt number, callback and enclosing deadline, and a copy of the properties (changes to the
   * copy's bag do not reach this one). It is cancelled by `cancellation` when given — a source that should
   * also follow this context's cancellation must do so itself — else by this context's cancellation.
   */
  fork(cancellation?: CancellationSource): ResilienceContext {
    return this._fork(cancellation ? new SourceCancellationScope(cancellation) : this._scope);
  }

  /**
   * Runs every later attempt of the current call's callback inside `around` (which must call `run` and
   * return what it returns). A tracing listener uses it to make its span the active one while the
   * user's code runs; the pipeline restores the plain callback when the call ends. A no-op outside a
   * pipeline execution.
   */
  wrapCallback(around: (run: () => unknown) => unknown): void {
    const callback = this._callback;
    if (callback === undefined) return;
    this._callback = (context, state) => around(() => callback(context, state));
  }

  /**
   * `fork` with an engine scope (a timeout's or a hedged attempt's).
   *
   * @internal
   */
  _fork(scope: CancellationScope): ResilienceContext {
    const copy = new ResilienceContext();
    copy.operationKey = this.operationKey;
    copy._scope = scope;
    copy._callback = this._callback;
    if (this._state !== undefined) copy._state = this._state;
    copy._deadline = this._deadline;
    if (this._pendingDeadline !== undefined) copy._pendingDeadline = this._pendingDeadline;
    copy.attemptNumber = this.attemptNumber;
    if (this.bag) copy.properties.addOrReplace(this.bag);
    return copy;
  }
}
