import { parseCriticality, type Criticality, type ResilienceContext, type TimeProvider } from '../../core/index.js';
import { DEFAULT_CRITICALITY_HEADER } from '../execution/route-criticality.js';

/**
 * The HTTP header (and RPC payload field) that carries the caller's remaining budget: whole milliseconds
 * the callee has left to answer, relative (no clock is shared between hosts). The resilient HTTP and RPC
 * clients send it on every attempt; `RequestDeadlineInterceptor` reads it.
 *
 * @publicApi
 */
export const REQUEST_DEADLINE_HEADER = 'x-request-deadline-ms';

/** gRPC's header for the same budget (`100m`, `2S`, …), also read by `RequestDeadlineInterceptor`. @publicApi */
export const GRPC_TIMEOUT_HEADER = 'grpc-timeout';

const GRPC_UNITS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1_000,
  m: 1,
  u: 0.001,
  n: 0.000_001,
};
/** gRPC's `TimeoutValue TimeoutUnit`: at most 8 digits and one of `H M S m u n`. */
const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;

/**
 * Parses a `grpc-timeout` value (`100m` = 100 ms, `2S` = 2 s, `1H`, `500u`, `10n`) into milliseconds;
 * `undefined` for anything else.
 *
 * @publicApi
 */
export function parseGrpcTimeout(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = GRPC_TIMEOUT.exec(value.trim());
  return match ? Number(match[1]) * GRPC_UNITS[match[2]] : undefined;
}

/**
 * Reads a budget as a caller sends it: milliseconds (a number or a numeric string; a negative one is a
 * spent budget, 0) or gRPC's syntax (`100m`, `2S`). `undefined` for anything else (no budget).
 *
 * @publicApi
 */
export function parseRequestBudget(value: unknown): number | undefined {
  if (Array.isArray(value)) value = value[0];
  if (typeof value === 'number') return Number.isFinite(value) ? Math.max(0, value) : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^[+-]?\d+(?:\.\d+)?$/.test(text)) return Math.max(0, Number(text));
  return parseGrpcTimeout(text);
}

/**
 * The budget in incoming HTTP headers (a Node `IncomingHttpHeaders`, names in lower case): the smaller of
 * `x-request-deadline-ms` and `grpc-timeout` when both are there; `undefined` when neither is.
 *
 * @publicApi
 */
export function readRequestBudget(headers: Readonly<Record<string, unknown>> | undefined): number | undefined {
  if (!headers) return undefined;
  const own = parseRequestBudget(headers[REQUEST_DEADLINE_HEADER]);
  const grpc = parseGrpcTimeout(headers[GRPC_TIMEOUT_HEADER]);
  if (own === undefined) return grpc;
  return grpc === undefined ? own : Math.min(own, grpc);
}

/**
 * Whole milliseconds left before `context`'s deadline (`context.deadline`, which an enclosing timeout
 * may have tightened), never negative; `undefined` when the context has no deadline. What a client sends
 * on each attempt.
 *
 * @publicApi
 */
export function remainingBudget(context: ResilienceContext, time: TimeProvider): number | undefined {
  const deadline = context.deadline;
  if (deadline === Infinity) return undefined;
  return Math.max(0, Math.floor(deadline - time.now()));
}

/**
 * The headers (or metadata entries) a client sends for a budget and a criticality, each when given:
 * `x-request-deadline-ms` (whole milliseconds) and `x-criticality`; `undefined` when neither is.
 *
 * @internal
 */
export function requestBudgetHeaders(
  budget: number | undefined,
  criticality: Criticality | undefined,
): Record<string, string> | undefined {
  if (budget === undefined && criticality === undefined) return undefined;
  const headers: Record<string, string> = {};
  if (budget !== undefined) headers[REQUEST_DEADLINE_HEADER] = String(budget);
  if (criticality !== undefined) headers[DEFAULT_CRITICALITY_HEADER] = criticality;
  return headers;
}

/**
 * `data` with the budget in its `x-request-deadline-ms` field and the criticality in its `x-criticality`
 * field (each when given), for an RPC message: a copy of a plain object (the caller's object is left as
 * it is). Data that is not a plain object cannot carry them and is returned as it is.
 *
 * @internal
 */
export function withRequestBudget(data: unknown, budget: number | undefined, criticality?: Criticality): unknown {
  if ((budget === undefined && criticality === undefined) || !isPlainObject(data)) return data;
  const sent: Record<string, unknown> = { ...data };
  if (budget !== undefined) sent[REQUEST_DEADLINE_HEADER] = budget;
  if (criticality !== undefined) sent[DEFAULT_CRITICALITY_HEADER] = criticality;
  return sent;
}

/**
 * Takes the criticality out of an RPC message's data (its `x-criticality` field) and returns it;
 * `undefined` when the data carries none, or a value that names none.
 *
 * @internal
 */
export function takeRequestCriticality(data: unknown): Criticality | undefined {
  if (!isPlainObject(data) || !(DEFAULT_CRITICALITY_HEADER in data)) return undefined;
  const criticality = parseCriticality(data[DEFAULT_CRITICALITY_HEADER]);
  delete data[DEFAULT_CRITICALITY_HEADER];
  return criticality;
}

/**
 * Takes the budget out of an RPC message's data (so the handler sees the data the caller sent) and
 * returns it; `undefined` when the data carries none.
 *
 * @internal
 */
export function takeRequestBudget(data: unknown): number | undefined {
  if (!isPlainObject(data) || !(REQUEST_DEADLINE_HEADER in data)) return undefined;
  const budget = parseRequestBudget(data[REQUEST_DEADLINE_HEADER]);
  delete data[REQUEST_DEADLINE_HEADER];
  return budget;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
