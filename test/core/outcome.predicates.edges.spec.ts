import { describe, expect, it } from '@jest/globals';
import {
  anyOf,
  handleAllErrors,
  handleError,
  handleResult,
  handleTransientNetworkErrors,
  isTransientNetworkError,
  outcomeFromError,
  outcomeFromValue,
  ResilienceContext,
  TRANSIENT_NETWORK_ERROR_CODES,
  unwrapOutcome,
  type OutcomePredicate,
} from '../../src/core.entry.js';
import { networkError } from '../utils/flaky.js';

const err = (e: unknown, context?: ResilienceContext) => ({ outcome: outcomeFromError(e), context });
const val = <T>(v: T) => ({ outcome: outcomeFromValue(v) });

/** A context whose caller aborted with `reason`. */
function abortedWith(reason: unknown): ResilienceContext {
  const controller = new AbortController();
  controller.abort(reason);
  return new ResilienceContext({ signal: controller.signal });
}

describe('outcome predicates at the edges', () => {
  it('no predicate handles the reason of an aborted caller signal, though it would handle the same error otherwise', () => {
    const reason = Object.assign(new Error('caller left'), { code: 'ECONNRESET' });
    const context = abortedWith(reason);
    const predicates: OutcomePredicate[] = [
      handleAllErrors,
      handleError(Error),
      handleError(() => true),
      handleTransientNetworkErrors,
    ];
    for (const predicate of predicates) {
      expect(predicate(err(reason))).toBe(true);
      expect(predicate(err(reason, context))).toBe(false);
      // Another error on the same aborted context is still judged on its own.
      expect(predicate(err(Object.assign(new Error('other'), { code: 'EPIPE' }), context))).toBe(true);
    }
  });

  it('handleError never handles a standard abort error, by class or by function', () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError', code: 'ECONNRESET' });
    expect(handleError(Error)(err(abort))).toBe(false);
    expect(handleError(() => true)(err(abort))).toBe(false);
    expect(handleTransientNetworkErrors(err(abort))).toBe(false);
    expect(handleError(() => true)(val(1))).toBe(false);
  });

  it('handleError with a class and a filter needs both', () => {
    let filtered = 0;
    const predicate = handleError(TypeError, (e) => {
      filtered++;
      return e.message === 'yes';
    });
    expect(predicate(err(new TypeError('yes')))).toBe(true);
    expect(predicate(err(new TypeError('no')))).toBe(false);
    expect(predicate(err(new RangeError('yes')))).toBe(false);
    expect(filtered).toBe(2);
  });

  it('tells an error class from a filter function: classes of any kind, legacy constructors, arrows', () => {
    class NotAnError {}
    function Legacy(this: Error) {}
    Legacy.prototype = Object.create(Error.prototype) as Error;
    expect(handleError(NotAnError)(err(new NotAnError()))).toBe(true);
    expect(handleError(NotAnError)(err(new Error('x')))).toBe(false);
    const legacy = handleError(Legacy as unknown as typeof Error);
    expect(legacy(err(Object.create(Legacy.prototype)))).toBe(true);
    expect(legacy(err(new Error('x')))).toBe(false);
    // A function whose source merely mentions a class is a filter.
    const mentionsClass = handleError(function mentions(e) {
      return String(e).includes('class x');
    });
    expect(mentionsClass(err('a class x'))).toBe(true);
    // A plain function is a filter: it is called with the error.
    expect(handleError((e) => e === 7)(err(7))).toBe(true);
    expect(
      handleError(function isSeven(e) {
        return e === 7;
      })(err(8)),
    ).toBe(false);
  });

  it('handleResult compares values with Object.is and never handles errors', () => {
    expect(handleResult(0)(val(-0))).toBe(false);
    expect(handleResult(0)(val(0))).toBe(true);
    expect(handleResult('x')(err('x') as never)).toBe(false);
    expect(handleResult<string>((v) => v === 'x')(err('x') as never)).toBe(false);
  });

  it('anyOf evaluates in order and stops at the first that handles; none handles when empty', async () => {
    const calls: string[] = [];
    const named =
      (name: string, verdict: boolean | Promise<boolean>): OutcomePredicate =>
      () => {
        calls.push(name);
        return verdict;
      };
    expect(anyOf(named('a', false), named('b', true), named('c', true))(val(1))).toBe(true);
    expect(calls).toEqual(['a', 'b']);
    calls.length = 0;
    expect(anyOf(named('a', false), named('b', false))(val(1))).toBe(false);
    expect(calls).toEqual(['a', 'b']);
    expect(anyOf()(val(1))).toBe(false);
    calls.length = 0;
    await expect(
      Promise.resolve(
        anyOf(
          named('a', Promise.resolve(false)),
          named('b', false),
          named('c', Promise.resolve(true)),
          named('d', true),
        )(val(1)),
      ),
    ).resolves.toBe(true);
    expect(calls).toEqual(['a', 'b', 'c']);
    calls.length = 0;
    await expect(Promise.resolve(anyOf(named('a', Promise.resolve(true)), named('b', true))(val(1)))).resolves.toBe(
      true,
    );
    expect(calls).toEqual(['a']);
    await expect(Promise.resolve(anyOf(named('a', Promise.resolve(false)))(val(1)))).resolves.toBe(false);
  });

  it('isTransientNetworkError knows every listed code, looks four causes deep, and ignores other shapes', () => {
    for (const code of TRANSIENT_NETWORK_ERROR_CODES) expect(isTransientNetworkError(networkError(code))).toBe(true);
    expect(TRANSIENT_NETWORK_ERROR_CODES.size).toBe(11);
    const nest = (depth: number): unknown => {
      let error: unknown = networkError('ECONNRESET');
      for (let i = 0; i < depth; i++) error = new Error(`wrapper ${i}`, { cause: error });
      return error;
    };
    expect(isTransientNetworkError(nest(4))).toBe(true);
    expect(isTransientNetworkError(nest(5))).toBe(false);
    expect(isTransientNetworkError(new Error('Socket Hang Up while reading'))).toBe(true);
    expect(isTransientNetworkError({ code: 5, message: 7 })).toBe(false);
    expect(isTransientNetworkError(null)).toBe(false);
    // Only objects are errors, and only a string message is read.
    expect(isTransientNetworkError(Object.assign(() => 0, { code: 'ECONNRESET' }))).toBe(false);
    expect(isTransientNetworkError({ message: ['socket hang up'] })).toBe(false);
    expect(isTransientNetworkError({ code: ['ECONNRESET'] })).toBe(false);
    const loop: { cause?: unknown } = {};
    loop.cause = loop;
    expect(isTransientNetworkError(loop)).toBe(false);
  });

  it('handleTransientNetworkErrors handles network faults only, never results', () => {
    expect(handleTransientNetworkErrors(err(networkError('ETIMEDOUT')))).toBe(true);
    expect(handleTransientNetworkErrors(err(new Error('bad request')))).toBe(false);
    expect(handleTransientNetworkErrors(val(networkError('ETIMEDOUT')))).toBe(false);
  });

  it('unwrapOutcome returns the value or throws the error, whatever it is', () => {
    expect(unwrapOutcome(outcomeFromValue(undefined))).toBeUndefined();
    expect(() => unwrapOutcome(outcomeFromError('plain string'))).toThrow('plain string');
    expect(outcomeFromError(0)).toEqual({ ok: false, error: 0 });
  });
});
