import type { ResilienceContext } from '../context/resilience.context.js';
import type { StrategyNext } from './resilience-strategy.interface.js';

/**
 * What a strategy implements so that the pipeline can run it inline: its success path is synchronous
 * bookkeeping before and after the inner call. The pipeline enters a run of such strategies (outer to
 * inner), calls the rest of the pipeline once, and on a value exits them (inner to outer) in one
 * continuation: one promise hop and one closure pair for the whole run instead of one per strategy.
 * Everything else (a failure, a value a strategy must inspect) continues through `inlineResume`, which
 * does what `execute` does once its `next(context)` has returned.
 *
 * @internal
 */
export interface InlineStrategy<T> {
  /**
   * Before the inner call. Returns the call's state for `inlineExitValue` and `inlineResume`, or a
   * `Promise`: the strategy took the call through its full path (with `next`) and this is the result.
   * States are never promises.
   */
  inlineEnter(context: ResilienceContext, next: StrategyNext<T>): unknown;
  /**
   * Optional: for a strategy that settles its calls itself (an aggressive timeout), the promise of the
   * entered call; the run then continues from it instead of calling the strategies inside this one.
   */
  inlineResult?(state: unknown): Promise<T> | undefined;
  /** The inner call fulfilled: true when done with the value, false when it must go through `inlineResume`. */
  inlineExitValue(state: unknown, context: ResilienceContext, value: T): boolean;
  /** Continues like `execute` after its `next(context)` returned `inner`. */
  inlineResume(state: unknown, next: StrategyNext<T>, context: ResilienceContext, inner: Promise<T>): Promise<T>;
}

/** @internal */
export function isInlineStrategy<T>(strategy: object): strategy is InlineStrategy<T> {
  const s = strategy as Partial<InlineStrategy<T>>;
  return (
    typeof s.inlineEnter === 'function' &&
    typeof s.inlineExitValue === 'function' &&
    typeof s.inlineResume === 'function'
  );
}
