import type { Outcome } from '../outcome.model.js';
import { isTransientNetworkError } from '../outcome.predicates.js';
import { isTimeoutRejectedError } from '../resilience.errors.js';

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
  for (const c of candidates) if (typeof c === 'number' && Number.isInteger(c) && c >= 100 && c <= 599) return c;
  return undefined;
}

/**
 * Handles what an HTTP client should retry: transient network errors, timeouts (`TimeoutRejectedError`),
 * and errors or responses with status 408, 429 or 5xx. Other 4xx are not handled.
 *
 * @publicApi
 */
export function handleTransientHttp({ outcome }: { readonly outcome: Outcome<unknown> }): boolean {
  if (outcome.ok) {
    const status = getHttpStatus(outcome.value);
    return status !== undefined && isTransientHttpStatus(status);
  }
  const error = outcome.error;
  if (isTransientNetworkError(error) || isTimeoutRejectedError(error)) return true;
  const status = getHttpStatus(error);
  return status !== undefined && isTransientHttpStatus(status);
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
  if (typeof value !== 'object' || value === null) return undefined;
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
