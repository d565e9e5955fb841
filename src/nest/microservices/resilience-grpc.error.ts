import type { ResilienceRpcError } from './resilience-rpc.error.js';

/** gRPC's status codes for the rejections, as Google's APIs map the HTTP statuses (AIP-193). */
const GRPC_STATUS_OF = {
  429: 8, // RESOURCE_EXHAUSTED
  503: 14, // UNAVAILABLE
  504: 4, // DEADLINE_EXCEEDED
} as const;

/**
 * What a gRPC handler (`@GrpcMethod`, unary or server-streaming) answers a resilience rejection with:
 * the shape Nest's gRPC transport hands to `@grpc/grpc-js`, which ends the call with `code` as its
 * status and `message` as its details (a `ResilienceRpcError` payload, whose `code` is text, would end
 * it as `UNKNOWN`).
 *
 * @internal
 */
export interface ResilienceGrpcError {
  /**
   * `DEADLINE_EXCEEDED` (4) for a timeout or a spent deadline, `UNAVAILABLE` (14) for an open or isolated
   * circuit, `RESOURCE_EXHAUSTED` (8) for a rate limiter.
   */
  readonly code: 4 | 8 | 14;
  /** The public message of the rejection, as in the `ResilienceRpcError` payload. */
  readonly message: string;
}

/** The gRPC answer for a rejection's `ResilienceRpcError` payload. @internal */
export function toResilienceGrpcError(payload: ResilienceRpcError): ResilienceGrpcError {
  return { code: GRPC_STATUS_OF[payload.status], message: payload.message };
}

/**
 * True when a handler's arguments (`ArgumentsHost.getArgs()`) are those of a gRPC call: Nest hands a
 * gRPC handler the request, the metadata and grpc-js's call object, which has `getDeadline()` and
 * `sendMetadata()`. Recognised by that shape, so this file never loads `@grpc/grpc-js` or
 * `@nestjs/microservices`.
 *
 * @internal
 */
export function isGrpcCallArgs(args: readonly unknown[]): boolean {
  return args.some(
    (arg) =>
      typeof arg === 'object' &&
      arg !== null &&
      typeof (arg as { getDeadline?: unknown }).getDeadline === 'function' &&
      typeof (arg as { sendMetadata?: unknown }).sendMetadata === 'function',
  );
}
