import { describe, expect, it } from '@jest/globals';
import {
  anyOf,
  handleAllErrors,
  handleError,
  handleResult,
  isTransientNetworkError,
  outcomeFromError,
  outcomeFromValue,
} from '../../src/core.entry.js';
import { networkError } from '../utils/flaky.js';

class HttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

const err = (e: unknown) => ({ outcome: outcomeFromError(e) });
const val = <T>(v: T) => ({ outcome: outcomeFromValue(v) });

describe('outcome predicates', () => {
  it('handleAllErrors handles errors of any kind but not cancellation or results', () => {
    expect(handleAllErrors(err(new Error('x')))).toBe(true);
    expect(handleAllErrors(err('string'))).toBe(true);
    expect(handleAllErrors(err(new DOMException('stop', 'AbortError')))).toBe(false);
    expect(handleAllErrors(err(Object.assign(new Error('c'), { code: 'ERR_CANCELED' })))).toBe(false);
    expect(handleAllErrors(val(1))).toBe(false);
  });

  it('handleError matches by class (with subclasses), by class and filter, and by function', () => {
    expect(handleError(HttpError)(err(new HttpError(500)))).toBe(true);
    expect(handleError(Error)(err(new HttpError(500)))).toBe(true);
    expect(handleError(HttpError)(err(new Error('plain')))).toBe(false);
    const serverErrors = handleError(HttpError, (e) => e.status >= 500);
    expect(serverErrors(err(new HttpError(503)))).toBe(true);
    expect(serverErrors(err(new HttpError(404)))).toBe(false);
    expect(handleError((e) => e === 'boom')(err('boom'))).toBe(true);
    expect(handleError(HttpError)(val(new HttpError(500)))).toBe(false);
  });

  it('handleResult matches results by predicate or by value, never errors', () => {
    expect(handleResult<number>((n) => n > 5)(val(6))).toBe(true);
    expect(handleResult<number>((n) => n > 5)(val(5))).toBe(false);
    expect(handleResult<null>(null)(val(null))).toBe(true);
    expect(handleResult<number>(Number.NaN)(val(Number.NaN))).toBe(true);
    expect(handleResult<null>(null)(err(null))).toBe(false);
  });

  it('anyOf combines sync and async predicates', async () => {
    const p = anyOf<unknown>(handleError(TypeError), async ({ outcome }) => outcome.ok && outcome.value === 'retry-me');
    expect(p(err(new TypeError('t')))).toBe(true);
    await expect(Promise.resolve(p(val('retry-me')))).resolves.toBe(true);
    await expect(Promise.resolve(p(val('fine')))).resolves.toBe(false);
  });

  it("isTransientNetworkError recognises the seeds' transient faults, also nested in a cause", () => {
    for (const code of ['ECONNRESET', 'ETIMEDOUT', 'ECONNREFUSED', 'EPIPE', 'EAI_AGAIN']) {
      expect(isTransientNetworkError(networkError(code))).toBe(true);
    }
    expect(isTransientNetworkError(new Error('socket hang up'))).toBe(true);
    expect(isTransientNetworkError(new TypeError('fetch failed', { cause: networkError('ECONNREFUSED') }))).toBe(true);
    expect(isTransientNetworkError(networkError('ENOENT'))).toBe(false);
    expect(isTransientNetworkError(new Error('bad request'))).toBe(false);
    expect(isTransientNetworkError('ECONNRESET')).toBe(false);
  });
});
