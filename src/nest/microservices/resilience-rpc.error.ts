import { types } from 'node:util';
import {
  isBrokenCircuitError,
  isDeadlineExceededError,
  isIsolatedCircuitError,
  isRateLimiterRejectedError,
  isTimeoutRejectedError,
} from '../../core/index.js';
import { publicResilienceMessage } from '../resilience-public.message.js';

/**
 * The error an RPC handler answers with when its pipeline rejects the call: the same statuses as the HTTP
 * mapping (open or isolated circuit → 503, rate limiter → 429, timeout → 504) and `retryAfter` in
 * **milliseconds** (`null` when unknown), which a resilient client's retry honours. Plain data, so every
 * transport's serializer carries it unchanged. gRPC has its own statuses: a gRPC handler's call ends
 * with one of them instead (see `ResilienceExceptionFilter`).
 *
 * @publicApi
 */
export interface ResilienceRpcError {
  /** The HTTP-like status: 429, 503 or 504. */
  readonly status: 429 | 503 | 504;
  /** The status's reason phrase. */
  readonly error: 'Too Many Requests' | 'Service Unavailable' | 'Gateway Timeout';
  /** The rejection's message. */
  readonly message: string;
  /** Milliseconds until a call may be admitted again, when known; otherwise `null`. */
  readonly retryAfter: number | null;
  /**
   * `DEADLINE_EXCEEDED` when the caller's deadline had passed (gRPC's name); absent otherwise. A gRPC
   * handler answers with the gRPC status itself instead of this payload (see `ResilienceExceptionFilter`).
   */
  readonly code?: 'DEADLINE_EXCEEDED';
}

/**
 * The `ResilienceRpcError` for a resilience rejection; anything else: `undefined`. Its `message` names
 * the pipeline (or its entry in `publicNames`), never a circuit key, an instance key or an address.
 *
 * @publicApi
 */
export function toResilienceRpcError(
  error: unknown,
  publicNames?: Readonly<Record<string, string>>,
): ResilienceRpcError | undefined {
  const message = publicResilienceMessage(error, publicNames);
  const wait = (ms: number | undefined): number | null => (ms === undefined ? null : Math.max(0, Math.ceil(ms)));
  if (isIsolatedCircuitError(error)) return { status: 503, error: 'Service Unavailable', message, retryAfter: null };
  if (isBrokenCircuitError(error)) {
    return { status: 503, error: 'Service Unavailable', message, retryAfter: wait(error.retryAfter) };
  }
  if (isRateLimiterRejectedError(error)) {
    return { status: 429, error: 'Too Many Requests', message, retryAfter: wait(error.retryAfter) };
  }
  if (isDeadlineExceededError(error)) {
    return { status: 504, error: 'Gateway Timeout', message, retryAfter: null, code: 'DEADLINE_EXCEEDED' };
  }
  if (isTimeoutRejectedError(error)) return { status: 504, error: 'Gateway Timeout', message, retryAfter: null };
  return undefined;
}

/**
 * True for a `ResilienceRpcError` received from a remote handler (after deserialization: a plain object
 * with a 429, 503 or 504 `status`, an `error` and a `message`).
 *
 * @publicApi
 */
export function isResilienceRpcError(value: unknown): value is ResilienceRpcError {
  if (typeof value !== 'object' || value === null || value instanceof Error || types.isNativeError(value)) return false;
  const { status, error, message } = value as Record<string, unknown>;
  return (
    (status === 429 || status === 503 || status === 504) && typeof error === 'string' && typeof message === 'string'
  );
}
