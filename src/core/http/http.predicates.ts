import { isCancellation } from '../outcome/cancellation.rule.js';
import { ResiliencePropertyKey } from '../context/resilience-property.key.js';
import { isTransientNetworkError, type OutcomePredicateArguments } from '../outcome/outcome.predicates.js';
import { isTimeoutRejectedError } from '../resilience.errors.js';

/** What the HTTP client tells its pipeline about the request being made. @publicApi */
export interface HttpRequestInfo {
  /** The request's method, upper case. */
  readonly method: string;
  /** The request's absolute URL. */
  readonly url: string;
  /** Safe methods, and unsafe ones marked idempotent (option or `Idempotency-Key` header). */
  readonly retryable: boolean;
  /** Extra statuses that count as failures (e.g. 404), besides the transient ones. */
  readonly failureStatusCodes: readonly number[];
}

/** The context property carrying `HttpRequestInfo`. @publicApi */
export const HTTP_REQUEST_INFO = new ResiliencePropertyKey<HttpRequestInfo>('nest-resilience.http.request');

/** HTTP status codes that signal a transient fault: 408, 429 and every 5xx (as Microsoft.Extensions.Http.Resilience). @publicApi */
export function isTransientHttpStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * The HTTP status carried by an error or a response of the common clients: axios errors
 * (`error.response.status`), Nest's `HttpException` (`getStatus()`), errors with `status` or `statusCode`,
 * and responses (`fetch`'s `Response`, axios responses) with a numeric `status`.
 *
 * @publicApi
 */
export function getHttpStatus(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as {
    status?: unknown;
    statusCode?: unknown;
    response?: { status?: unknown };
    getStatus?: () => unknown;
  };
  const candidates = [
    v.response?.status,
    typeof v.getStatus === 'function' ? v.getStatus() : undefined,
    v.status,
    v.statusCode,
  ];
  // Stryker disable next-line ConditionalExpression: equivalent — Number.isInteger already refuses what is not a number; the typeof narrows the type
  for (const c of candidates) if (typeof c === 'number' && Number.isInteger(c) && c >= 100 && c <= 599) return c;
  return undefined;
}

/**
 * Handles what an HTTP client should retry: transient network errors, timeouts (`TimeoutRejectedError`),
 * and errors or responses with status 408, 429 or 5xx. Other 4xx and cancellations are not handled.
 *
 * @publicApi
 */
export function handleTransientHttp({ outcome, context }: OutcomePredicateArguments<unknown>): boolean {
  if (outcome.ok) {
    const status = getHttpStatus(outcome.value);
    // Stryker disable next-line ConditionalExpression: equivalent — no status is transient either way; the check narrows the type
    return status !== undefined && isTransientHttpStatus(status);
  }
  const error = outcome.error;
  if (isCancellation(error, context)) return false;
  if (isTransientNetworkError(error) || isTimeoutRejectedError(error)) return true;
  const status = getHttpStatus(error);
  // Stryker disable next-line ConditionalExpression: equivalent — no status is transient either way; the check narrows the type
  return status !== undefined && isTransientHttpStatus(status);
}

/**
 * A failure of an HTTP call: a transient one (network error, timeout, 408, 429, 5xx) or a status the
 * request lists in `failureStatusCodes`. What circuit breakers count; named `http-failure` in
 * configuration. Needs no HTTP client library: it reads statuses and the request info in the context.
 *
 * @publicApi
 */
export function handleHttpFailure({ outcome, context }: OutcomePredicateArguments<unknown>): boolean {
  if (!outcome.ok && isCancellation(outcome.error, context)) return false;
  const value = outcome.ok ? outcome.value : outcome.error;
  if (!outcome.ok && (isTransientNetworkError(value) || isTimeoutRejectedError(value))) return true;
  const status = getHttpStatus(value);
  // Stryker disable next-line ConditionalExpression: equivalent — no status is transient or listed either way; the check narrows the type
  if (status === undefined) return false;
  return (
    isTransientHttpStatus(status) ||
    (context?.properties.get(HTTP_REQUEST_INFO)?.failureStatusCodes.includes(status) ?? false)
  );
}

/**
 * What an HTTP retry may repeat: a failure (as `handleHttpFailure`) of a request that may be repeated —
 * unsafe methods (POST, PATCH) only when marked idempotent. Named `http-retryable` in configuration.
 *
 * @publicApi
 */
export function handleRetryableHttpFailure(args: OutcomePredicateArguments<unknown>): boolean {
  const info = args.context?.properties.get(HTTP_REQUEST_INFO);
  if (info && !info.retryable) return false;
  return handleHttpFailure(args);
}

/**
 * Parses a `Retry-After` header value: delta-seconds (`"120"`) or an HTTP-date (`"Wed, 21 Oct 2015 07:28:00 GMT"`),
 * into milliseconds from `now`. A date in the past gives 0; anything unparseable gives `undefined`.
 *
 * @publicApi
 */
export function parseRetryAfter(value: unknown, now: number): number | undefined {
  if (Array.isArray(value)) value = value[0];
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * 1_000 : undefined;
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1_000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date) || !/[a-z]/i.test(trimmed)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Reads a `Retry-After` header from a response or an error's response (axios, `fetch`, plain header
 * objects), in milliseconds from `now`.
 *
 * @publicApi
 */
export function getHttpRetryAfter(value: unknown, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value as { headers?: unknown; response?: { headers?: unknown } };
  const headers = v.response?.headers ?? v.headers;
  if (typeof headers !== 'object' || headers === null) return undefined;
  const get = (headers as { get?: (name: string) => unknown }).get;
  const raw =
    typeof get === 'function'
      ? get.call(headers, 'retry-after')
      : ((headers as Record<string, unknown>)['retry-after'] ?? (headers as Record<string, unknown>)['Retry-After']);
  return parseRetryAfter(raw ?? undefined, now);
}
