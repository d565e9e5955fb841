import type { ResilienceContext } from '../context/resilience.context.js';
import { isThenable } from '../utils/is-thenable.util.js';
import { withdrawTimestamp } from '../time/shared-timestamp.util.js';
import type { InlineStrategy } from '../strategy/inline-strategy.interface.js';
import type { StrategyNext } from '../strategy/resilience-strategy.interface.js';

/** The most strategies one inline run holds; a longer chain of them is split into runs. @internal */
export const MAX_INLINE_RUN = 4;

/**
 * The head of a run of inline strategies: enters each (outer to inner), calls `inner` once and, on a
 * value, exits them (inner to outer) in one continuation. `nexts[k]` is what strategy `k` would receive as
 * `next` (the rest of the pipeline after it); a strategy that takes the call whole, a failure, and a value
 * a strategy must judge continue through `inlineResume`, strategy by strategy, as `execute` would.
 *
 * @internal
 */
export function inlineHead(
  strategies: readonly InlineStrategy<unknown>[],
  nexts: readonly StrategyNext<unknown>[],
  inner: StrategyNext<unknown>,
): StrategyNext<unknown> {
  const count = strategies.length;
  const settlesItself = strategies.map((s) => typeof s.inlineResult === 'function');
  return (context) => {
    // The states of the entered strategies, in locals: the continuation's closures are all a run allocates.
    let s0: unknown, s1: unknown, s2: unknown, s3: unknown;
    let entered = 0;
    let result: Promise<unknown> | undefined;
    try {
      for (; entered < count; entered++) {
        const state = strategies[entered].inlineEnter(context, nexts[entered]);
        if (isThenable(state)) {
          result = Promise.resolve(state);
          break;
        }
        if (entered === 0) s0 = state;
        else if (entered === 1) s1 = state;
        else if (entered === 2) s2 = state;
        else s3 = state;
        if (settlesItself[entered]) {
          result = strategies[entered].inlineResult!(state);
          if (result !== undefined) {
            entered++;
            break;
          }
        }
      }
      // A timestamp one strategy offered another (`offerTimestamp`) lives within the enter loop.
      withdrawTimestamp();
      result ??= inner(context);
    } catch (error) {
      withdrawTimestamp();
      result = Promise.reject(error);
    }
    if (entered === 0) return result;
    return exitOnSettle(strategies, nexts, context, entered - 1, result, s0, s1, s2, s3);
  };
}

/**
 * The continuation of an entered run (a function of its own, so that a call some strategy took whole
 * allocates no closure context).
 */
function exitOnSettle(
  strategies: readonly InlineStrategy<unknown>[],
  nexts: readonly StrategyNext<unknown>[],
  context: ResilienceContext,
  last: number,
  result: Promise<unknown>,
  s0: unknown,
  s1: unknown,
  s2: unknown,
  s3: unknown,
): Promise<unknown> {
  return result.then(
    (value) => {
      for (let k = last; k >= 0; k--) {
        const state = k === 0 ? s0 : k === 1 ? s1 : k === 2 ? s2 : s3;
        let done: boolean;
        try {
          done = strategies[k].inlineExitValue(state, context, value);
        } catch (error) {
          withdrawTimestamp();
          return resume(strategies, nexts, context, k - 1, Promise.reject(error), s0, s1, s2, s3);
        }
        if (!done) {
          withdrawTimestamp();
          return resume(strategies, nexts, context, k, Promise.resolve(value), s0, s1, s2, s3);
        }
      }
      // A timestamp one strategy offered another lives within the exit loop.
      withdrawTimestamp();
      return value;
    },
    (error: unknown) => resume(strategies, nexts, context, last, Promise.reject(error), s0, s1, s2, s3),
  );
}

/** Hands `inner` to strategies `from` … 0 as their `next(context)` result, innermost first. */
function resume(
  strategies: readonly InlineStrategy<unknown>[],
  nexts: readonly StrategyNext<unknown>[],
  context: ResilienceContext,
  from: number,
  inner: Promise<unknown>,
  s0: unknown,
  s1: unknown,
  s2: unknown,
  s3: unknown,
): Promise<unknown> {
  let result = inner;
  for (let k = from; k >= 0; k--) {
    const state = k === 0 ? s0 : k === 1 ? s1 : k === 2 ? s2 : s3;
    // No built-in inlineResume throws (each returns `inner.then(…)`); this runs in a continuation anyway.
    result = strategies[k].inlineResume(state, nexts[k], context, result);
  }
  return result;
}
