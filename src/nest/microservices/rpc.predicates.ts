import { types } from 'node:util';
import {
  isCancellation,
  isTimeoutRejectedError,
  isTransientNetworkError,
  ResiliencePropertyKey,
  type OutcomePredicate,
  type ResilienceContext,
} from '../../core/index.js';
import { isResilienceRpcError } from './resilience-rpc.error.js';

/** Decides about one error a remote handler returned (an `RpcException` payload). @publicApi */
export type RemoteRpcErrorPredicate = (error: unknown) => boolean;

/** What the resilient client tells its pipeline about the message being sent. @publicApi */
export interface RpcCallInfo {
  /** The client's name. */
  readonly client: string;
  /** The pattern as a route string (an object pattern as Nest's sorted JSON). */
  readonly pattern: string;
  /** `send` (request and reply) or `emit` (an event, no reply). */
  readonly kind: 'send' | 'emit';
  /** May the call be repeated (`send` by default, `emit` only for a pattern marked idempotent). */
  readonly retryable: boolean;
  /** Which errors returned by the remote handler a retry repeats. Default none. */
  readonly retryRemoteErrors: RemoteRpcErrorPredicate;
  /** Which errors returned by the remote handler a circuit breaker counts. Default none. */
  readonly countRemoteErrors: RemoteRpcErrorPredicate;
}

/** The context property carrying `RpcCallInfo`. @publicApi */
export const RPC_CALL_INFO = new ResiliencePropertyKey<RpcCallInfo>('nest-resilience.rpc.call');

const TRANSPORT_ERROR_CODES: ReadonlySet<string> = new Set([
  // NATS client
  'CONNECTION_REFUSED',
  'CONNECTION_CLOSED',
  'CONNECTION_DRAINING',
  'CONNECTION_TIMEOUT',
  'DISCONNECT',
  'TIMEOUT',
  '503',
  // Redis (ioredis) and MQTT (mqtt.js) clients
  'ECONNCLOSED',
  'NR_CLOSED',
]);

const TRANSPORT_ERROR_NAMES: ReadonlySet<string> = new Set([
  'TimeoutError', // RxJS' timeout()
  'NetSocketClosedException', // TCP
  'EmptyResponseException', // NATS: nobody subscribes to the subject (the server is gone)
  'ConnectionError', // NATS
]);

/**
 * What Nest's broker clients reject a call with while their connection is down: a plain string, not an
 * `Error`. Redis (with `retryAttempts`), NATS, MQTT and RMQ reject every `send` and `emit` with the first
 * while they reconnect; the others are RMQ's and MQTT's texts for the same condition. Matched exactly
 * (trimmed), so a remote handler's own string payload is not mistaken for one.
 */
const TRANSPORT_REJECTION_TEXTS: ReadonlySet<string> = new Set([
  'Error: Connection lost. Trying to reconnect...',
  'Disconnected from RMQ. Trying to reconnect.',
  'Connection to transport failed. Trying to reconnect...',
]);

/** One of the strings Nest's clients reject with while their broker connection is down. */
function isTransportRejectionText(value: unknown): boolean {
  return typeof value === 'string' && TRANSPORT_REJECTION_TEXTS.has(value.trim());
}

const TRANSPORT_ERROR_MESSAGE =
  /connection (is )?(closed|lost|refused)|not connected|socket (is )?closed|disconnect|no responders|no subscribers|connack timeout|stream ended|broker unavailable/i;

/**
 * A failure of the transport, not of the remote handler: connection refused or reset, the connection or
 * socket closed, the broker unavailable, the client not connected, nobody serving the pattern (NATS' empty
 * response), or no reply within the timeout
 * (`TimeoutRejectedError`, RxJS' `TimeoutError`) — and the string Nest's Redis, NATS, MQTT and RMQ clients
 * reject calls with while their broker connection is down and they reconnect
 * (`"Error: Connection lost. Trying to reconnect..."`). Other errors a remote handler returned arrive as
 * plain data and are never transport failures.
 *
 * @publicApi
 */
export function isRpcTransportError(error: unknown): boolean {
  if (isTimeoutRejectedError(error)) return true;
  if (!isError(error)) return isTransportRejectionText(error);
  if (TRANSPORT_ERROR_NAMES.has(error.name) || TRANSPORT_ERROR_NAMES.has(error.constructor?.name)) return true;
  if (isTransientNetworkError(error)) return true;
  const code = (error as { code?: unknown }).code;
  if ((typeof code === 'string' || typeof code === 'number') && TRANSPORT_ERROR_CODES.has(String(code))) return true;
  return TRANSPORT_ERROR_MESSAGE.test(error.message);
}

/**
 * An error the remote handler returned (what an `RpcException` carries, or Nest's answer for an unknown
 * error): plain data after deserialization, not an `Error` made on this side, nor the string a broker
 * client rejects with while it reconnects (a transport failure, see `isRpcTransportError`).
 *
 * @publicApi
 */
export function isRemoteRpcError(error: unknown): boolean {
  return error !== undefined && error !== null && !isError(error) && !isTransportRejectionText(error);
}

/** An `Error` made on this side — of any realm (a socket's error comes from Node's own). */
function isError(value: unknown): value is Error {
  return value instanceof Error || types.isNativeError(value);
}

/**
 * A failure of an RPC call, as circuit breakers count it: a transport failure, a resilience rejection of
 * the remote handler (`ResilienceRpcError`: its circuit open, its rate limit, its timeout), or a remote
 * error the pattern's `countRemoteErrors` accepts (none by default).
 *
 * @publicApi
 */
export const handleRpcFailure: OutcomePredicate<unknown> = (args) => {
  const { outcome } = args;
  if (outcome.ok) return false;
  const error = outcome.error;
  if (isRpcTransportError(error) || isResilienceRpcError(error)) return true;
  if (!isRemoteRpcError(error)) return false;
  return callInfoOf(args)?.countRemoteErrors(error) ?? false;
};

/**
 * What an RPC retry repeats: a transport failure or a remote resilience rejection (waiting its
 * `retryAfter`), or a remote error the pattern's `retryRemoteErrors` accepts (none by default) — of a
 * call that may be repeated (`emit` only for a pattern marked idempotent).
 *
 * @publicApi
 */
export const handleRetryableRpcFailure: OutcomePredicate<unknown> = (args) => {
  const { outcome } = args;
  if (outcome.ok) return false;
  const info = callInfoOf(args);
  if (info && !info.retryable) return false;
  const error = outcome.error;
  if (isCancellation(error)) return false; // the caller gave up
  if (isRpcTransportError(error) || isResilienceRpcError(error)) return true;
  if (!isRemoteRpcError(error)) return false;
  return info?.retryRemoteErrors(error) ?? false;
};

/** Transport failures only (see `isRpcTransportError`). @publicApi */
export const handleRpcTransportError: OutcomePredicate<unknown> = ({ outcome }) =>
  !outcome.ok && isRpcTransportError(outcome.error);

/**
 * The RPC predicates by the names configuration uses: `rpc-failure`, `rpc-retryable`, `rpc-transport`.
 * `ResilientClientsModule` registers them; give them to `ResilienceModule.forRoot({ predicates })` too
 * when pipelines of `forRoot` name them.
 *
 * @publicApi
 */
export const RPC_PREDICATES: Readonly<
  Record<'rpc-failure' | 'rpc-retryable' | 'rpc-transport', OutcomePredicate<unknown>>
> = {
  'rpc-failure': handleRpcFailure,
  'rpc-retryable': handleRetryableRpcFailure,
  'rpc-transport': handleRpcTransportError,
};

/** Every strategy's predicate arguments carry the context; the shared predicate type only names the outcome. */
function callInfoOf(args: object): RpcCallInfo | undefined {
  return (args as { context?: ResilienceContext }).context?.properties.get(RPC_CALL_INFO);
}
