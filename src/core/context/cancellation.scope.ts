import { setMaxListeners } from 'node:events';
import { abortReason } from '../time/time.provider.js';

/**
 * The cancellation state an execution runs under. Signals are created only when somebody reads them:
 * a pipeline whose callback never looks at `context.signal` allocates no `AbortController`.
 *
 * @internal
 */
export abstract class CancellationScope {
  /** False for a scope that can never abort: children then need no link to it. */
  abstract get canAbort(): boolean;
  abstract get aborted(): boolean;
  abstract get signal(): AbortSignal;
  abstract get reason(): unknown;
}

/**
 * A cancellation that an execution observes without an `AbortSignal` until somebody asks for one:
 * `ResilienceContextOptions.cancellation`. `aborted` and `reason` are read on every check; `signal` only
 * when a strategy or the callback needs a signal (and should then abort when `aborted` becomes true).
 *
 * @publicApi
 */
export interface CancellationSource {
  /** Whether the caller has cancelled. */
  readonly aborted: boolean;
  /** Why it aborted; read once `aborted` is true. */
  readonly reason: unknown;
  /** The signal that aborts when the caller cancels. */
  readonly signal: AbortSignal;
}

/** The outermost scope when the caller passed a `CancellationSource`. @internal */
export class SourceCancellationScope extends CancellationScope {
  constructor(private readonly source: CancellationSource) {
    super();
  }

  get canAbort(): boolean {
    return true;
  }

  get aborted(): boolean {
    return this.source.aborted;
  }

  get reason(): unknown {
    return this.source.reason;
  }

  get signal(): AbortSignal {
    return this.source.signal;
  }
}

/** The outermost scope when the caller passed a signal. @internal */
export class ExternalCancellationScope extends CancellationScope {
  constructor(readonly signal: AbortSignal) {
    super();
  }

  get canAbort(): boolean {
    return true;
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  get reason(): unknown {
    return abortReason(this.signal);
  }
}

/**
 * The outermost scope when the caller passed no signal: it never aborts. Shared by every such context;
 * `ResilienceContext.signal` gives each context its own never-aborting signal on first read, so no
 * listener of one call can pile up on a signal shared with others.
 *
 * @internal
 */
export class NoCancellationScope extends CancellationScope {
  static readonly instance = new NoCancellationScope();

  get canAbort(): boolean {
    return false;
  }

  get aborted(): boolean {
    return false;
  }

  /** Never aborted: no reason. */
  readonly reason: unknown = undefined;

  get signal(): AbortSignal {
    return new AbortController().signal;
  }
}

/**
 * A child scope that aborts when its parent aborts or when `abort()` is called (a timeout, a losing
 * hedged attempt). Its signal and the link to the parent exist only once the signal is read; `dispose()`
 * removes that link so nothing is left listening on the parent.
 *
 * @internal
 */
export class LinkedCancellationScope extends CancellationScope {
  private controller?: AbortController;
  private ownAborted = false;
  private ownReason: unknown;
  private parentSignal?: AbortSignal;
  /** Created with the link to the parent: a scope whose signal nobody reads allocates no listener. */
  private onParentAbort: (() => void) | undefined = undefined;

  constructor(private readonly parent: CancellationScope) {
    super();
  }

  get canAbort(): boolean {
    return true;
  }

  get aborted(): boolean {
    return this.ownAborted || this.parent.aborted;
  }

  /** True when this scope itself was aborted (not merely its parent). */
  get abortedHere(): boolean {
    return this.ownAborted;
  }

  get reason(): unknown {
    return this.ownAborted ? this.ownReason : this.parent.reason;
  }

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    const controller = (this.controller = new AbortController());
    // Many listeners on one execution's signal are legitimate (parallel hedges, nested calls).
    setMaxListeners(0, controller.signal);
    if (this.ownAborted) {
      controller.abort(this.ownReason);
    } else if (this.parent.aborted) {
      this.abort(this.parent.reason);
    } else {
      this.linkToParent();
    }
    return controller.signal;
  }

  /** Aborts this scope when the parent's signal aborts (the listener is removed on the first abort). */
  private linkToParent(): void {
    // Stryker disable next-line ConditionalExpression: equivalent for `false` — only the never-cancelled scope cannot abort, and a link to its fresh signal changes nothing
    if (!this.parent.canAbort) return;
    this.parentSignal = this.parent.signal;
    // Many concurrent executions may share one caller signal, each linking to it while it runs.
    setMaxListeners(0, this.parentSignal);
    this.onParentAbort ??= () => this.abort(this.parent.reason);
    this.parentSignal.addEventListener('abort', this.onParentAbort);
  }

  abort(reason: unknown): void {
    if (this.ownAborted) return;
    this.ownAborted = true;
    this.ownReason = reason;
    this.unlink();
    this.controller?.abort(reason);
  }

  /** Releases the listener on the parent's signal. The scope must not be used afterwards. */
  dispose(): void {
    this.unlink();
  }

  private unlink(): void {
    if (this.parentSignal) {
      this.parentSignal.removeEventListener('abort', this.onParentAbort!);
      this.parentSignal = undefined;
    }
  }
}
