import { describe, expect, it } from '@jest/globals';
import {
  getHttpRetryAfter,
  getHttpStatus,
  handleHttpFailure,
  handleRetryableHttpFailure,
  handleTransientHttp,
  HTTP_REQUEST_INFO,
  isTransientHttpStatus,
  outcomeFromError,
  outcomeFromValue,
  parseRetryAfter,
  ResilienceContext,
  TimeoutRejectedError,
  type HttpRequestInfo,
  type Outcome,
} from '../../../src/core.entry.js';

const withStatus = (status: number) => Object.assign(new Error(`HTTP ${status}`), { status });
const network = () => Object.assign(new Error('reset'), { code: 'ECONNRESET' });
const timeout = () => new TimeoutRejectedError(10);
const abort = () => new DOMException('stopped', 'AbortError');

function requestContext(info: Partial<HttpRequestInfo>): ResilienceContext {
  const context = new ResilienceContext();
  context.properties.set(HTTP_REQUEST_INFO, {
    method: 'GET',
    url: 'https://api.example/x',
    retryable: true,
    failureStatusCodes: [],
    ...info,
  });
  return context;
}

describe('HTTP statuses', () => {
  it.each([
    [408, true],
    [429, true],
    [500, true],
    [503, true],
    [599, true],
    [499, false],
    [400, false],
    [404, false],
    [407, false],
    [409, false],
    [428, false],
    [430, false],
    [200, false],
  ])('%d is transient: %p', (status, transient) => {
    expect(isTransientHttpStatus(status)).toBe(transient);
  });

  it('reads the status of axios errors, HttpExceptions, errors and responses, in that order', () => {
    expect(getHttpStatus({ response: { status: 503 }, status: 400, statusCode: 401 })).toBe(503);
    expect(getHttpStatus({ getStatus: () => 429, status: 400, statusCode: 401 })).toBe(429);
    expect(getHttpStatus({ status: 404, statusCode: 401 })).toBe(404);
    expect(getHttpStatus({ statusCode: 502 })).toBe(502);
    expect(getHttpStatus({ response: { status: 'bad' }, getStatus: 'no', status: 1_000, statusCode: 500 })).toBe(500);
  });

  it('reads only whole statuses from 100 to 599', () => {
    expect(getHttpStatus({ status: 100 })).toBe(100);
    expect(getHttpStatus({ status: 599 })).toBe(599);
    for (const status of [99, 600, 500.5, '500', Number.NaN]) expect(getHttpStatus({ status })).toBeUndefined();
    for (const value of [null, undefined, 500, 'HTTP 500', {}]) expect(getHttpStatus(value)).toBeUndefined();
  });
});

describe('handleTransientHttp', () => {
  const handled = (outcome: Outcome<unknown>, context?: ResilienceContext) => handleTransientHttp({ outcome, context });

  it('handles responses and errors with a transient status, network errors and timeouts', () => {
    expect(handled(outcomeFromValue({ status: 503 }))).toBe(true);
    expect(handled(outcomeFromValue({ status: 200 }))).toBe(false);
    expect(handled(outcomeFromValue({ status: 404 }))).toBe(false);
    expect(handled(outcomeFromValue('no status'))).toBe(false);
    expect(handled(outcomeFromError(withStatus(429)))).toBe(true);
    expect(handled(outcomeFromError(withStatus(400)))).toBe(false);
    expect(handled(outcomeFromError(network()))).toBe(true);
    expect(handled(outcomeFromError(timeout()))).toBe(true);
    expect(handled(outcomeFromError(new Error('plain')))).toBe(false);
  });

  it('never handles a cancellation, even one with a transient status', () => {
    expect(handled(outcomeFromError(Object.assign(abort(), { status: 503 })))).toBe(false);
    const controller = new AbortController();
    const reason = withStatus(503);
    controller.abort(reason);
    expect(handled(outcomeFromError(reason), new ResilienceContext({ signal: controller.signal }))).toBe(false);
  });
});

describe('handleHttpFailure and handleRetryableHttpFailure', () => {
  const failure = (outcome: Outcome<unknown>, context?: ResilienceContext) => handleHttpFailure({ outcome, context });
  const retryable = (outcome: Outcome<unknown>, context?: ResilienceContext) =>
    handleRetryableHttpFailure({ outcome, context });

  it('counts transient failures, and the statuses the request lists', () => {
    expect(failure(outcomeFromError(network()))).toBe(true);
    expect(failure(outcomeFromError(timeout()))).toBe(true);
    expect(failure(outcomeFromValue({ status: 500 }))).toBe(true);
    expect(failure(outcomeFromError(withStatus(404)))).toBe(false);
    expect(failure(outcomeFromError(withStatus(404)), requestContext({ failureStatusCodes: [404] }))).toBe(true);
    expect(failure(outcomeFromValue({ status: 404 }), requestContext({ failureStatusCodes: [404] }))).toBe(true);
    expect(failure(outcomeFromValue({ status: 409 }), requestContext({ failureStatusCodes: [404] }))).toBe(false);
    expect(failure(outcomeFromError(new Error('no status')), requestContext({ failureStatusCodes: [404] }))).toBe(
      false,
    );
    expect(failure(outcomeFromValue({ status: 404 }), new ResilienceContext())).toBe(false);
  });

  it('does not count a response that is a network error by its shape, nor a cancellation', () => {
    expect(failure(outcomeFromValue({ code: 'ECONNRESET' }))).toBe(false);
    expect(failure(outcomeFromError(Object.assign(abort(), { status: 500 })))).toBe(false);
  });

  it('repeats only requests that may be repeated', () => {
    const post = requestContext({ method: 'POST', retryable: false });
    expect(retryable(outcomeFromError(withStatus(503)), post)).toBe(false);
    expect(retryable(outcomeFromError(withStatus(503)), requestContext({ method: 'POST', retryable: true }))).toBe(
      true,
    );
    expect(retryable(outcomeFromError(withStatus(503)))).toBe(true);
    expect(retryable(outcomeFromError(withStatus(400)), requestContext({}))).toBe(false);
  });
});

describe('Retry-After', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');

  it('reads delta-seconds as text or number, and the first of several values', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 7 ', now)).toBe(7_000);
    expect(parseRetryAfter(0, now)).toBe(0);
    expect(parseRetryAfter(1.5, now)).toBe(1_500);
    expect(parseRetryAfter(['3', '9'], now)).toBe(3_000);
  });

  it('reads an HTTP date relative to now, never below zero', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:27:00 GMT', now)).toBe(0);
  });

  it('reads nothing from anything else', () => {
    for (const value of [-1, Infinity, Number.NaN, '-5', '1.5', 'soon', '2015-10-21', '', null, undefined, {}, true]) {
      expect(parseRetryAfter(value, now)).toBeUndefined();
    }
  });

  it('finds the header of a fetch response, an axios error and plain header objects', () => {
    expect(getHttpRetryAfter(new Response(null, { status: 429, headers: { 'Retry-After': '5' } }), now)).toBe(5_000);
    expect(
      getHttpRetryAfter({ response: { headers: { 'retry-after': '6' } }, headers: { 'retry-after': '1' } }, now),
    ).toBe(6_000);
    expect(getHttpRetryAfter({ headers: { 'Retry-After': '8' } }, now)).toBe(8_000);
    expect(getHttpRetryAfter({ headers: { 'retry-after': '2', 'Retry-After': '9' } }, now)).toBe(2_000);
    expect(getHttpRetryAfter(new Response(null, { status: 429 }), now)).toBeUndefined();
  });

  it('finds nothing without headers', () => {
    for (const value of [
      null,
      undefined,
      'text',
      5,
      {},
      { headers: null },
      { headers: 'retry-after: 5' },
      { response: {} },
    ]) {
      expect(getHttpRetryAfter(value, now)).toBeUndefined();
    }
  });
});
