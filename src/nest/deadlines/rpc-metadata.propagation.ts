import { parseCriticality, type Criticality } from '../../core/index.js';
import { DEFAULT_CRITICALITY_HEADER } from '../execution/route-criticality.js';
import {
  GRPC_TIMEOUT_HEADER,
  parseGrpcTimeout,
  parseRequestBudget,
  REQUEST_DEADLINE_HEADER,
} from './request-deadline.propagation.js';

/** One entry of a message's metadata by its name in lower case; `undefined` when the message has none. */
type MetadataLookup = (name: string) => unknown;

/** What the transport's own metadata of an RPC message carries. @internal */
export interface RpcMetadataBudget {
  /** The budget in milliseconds; `undefined` when the metadata carries none. */
  readonly budget: number | undefined;
  /** The criticality; `undefined` when the metadata carries none (or a value that names none). */
  readonly criticality: Criticality | undefined;
}

const NOTHING: RpcMetadataBudget = { budget: undefined, criticality: undefined };

/**
 * Reads the budget and criticality an RPC message carries in its transport's own metadata, from the
 * arguments of the handler's call (`ExecutionContext.getArgs()`: data, transport context, and for gRPC
 * the call). The transport is recognised by the shape of its context — this file never loads
 * `@nestjs/microservices`:
 *
 * - NATS (`NatsContext.getHeaders()`), RabbitMQ (`RmqContext.getMessage().properties.headers`), MQTT 5
 *   (`MqttContext.getPacket().properties.userProperties`), Kafka (`KafkaContext.getMessage().headers`,
 *   values as `Buffer`s or text), gRPC (the `Metadata`): the entries
 *   `x-request-deadline-ms` (milliseconds or gRPC's syntax) and `grpc-timeout` (the smaller wins), and
 *   `x-criticality`; names are matched in any case.
 * - gRPC: the call's own deadline (`call.getDeadline()`, a wall-clock time set from the caller's
 *   `grpc-timeout`) too; `now` is the wall clock it is measured against.
 *
 * @internal
 */
export function readRpcMetadata(args: readonly unknown[], now: () => number = Date.now): RpcMetadataBudget {
  const lookup = lookupOf(args[1]);
  const callBudget = grpcCallBudget(args[2], now);
  if (!lookup) return callBudget === undefined ? NOTHING : { budget: callBudget, criticality: undefined };
  const budget = smallerBudget(
    smallerBudget(
      parseRequestBudget(first(lookup(REQUEST_DEADLINE_HEADER))),
      parseGrpcTimeout(first(lookup(GRPC_TIMEOUT_HEADER))),
    ),
    callBudget,
  );
  return { budget, criticality: parseCriticality(first(lookup(DEFAULT_CRITICALITY_HEADER))) };
}

/** The smaller of two budgets, either of which may be missing. @internal */
export function smallerBudget(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

/** The methods of Nest's transport contexts (and gRPC's `Metadata`) this file tells them apart by. */
interface TransportContext {
  getHeaders?: () => unknown;
  getPacket?: () => unknown;
  getMessage?: () => unknown;
  get?: (name: string) => unknown;
  getMap?: () => unknown;
}

function lookupOf(context: unknown): MetadataLookup | undefined {
  if (typeof context !== 'object' || context === null) return undefined;
  const ctx = context as TransportContext;
  if (typeof ctx.getHeaders === 'function') return natsLookup(ctx.getHeaders());
  if (typeof ctx.getPacket === 'function') {
    const packet = ctx.getPacket() as { properties?: { userProperties?: unknown } } | undefined;
    return recordLookup(packet?.properties?.userProperties);
  }
  if (typeof ctx.getMessage === 'function') {
    const message = ctx.getMessage() as { properties?: { headers?: unknown }; headers?: unknown } | undefined;
    // RabbitMQ: the AMQP message's properties; Kafka (`KafkaContext`): the record's own headers.
    return message?.properties !== undefined
      ? recordLookup(message.properties.headers)
      : recordLookup(message?.headers);
  }
  if (typeof ctx.get === 'function' && typeof ctx.getMap === 'function') {
    const metadata = ctx as { get(name: string): unknown };
    return (name) => metadata.get(name);
  }
  return undefined;
}

/** NATS headers (`MsgHdrs`): `keys()` and `get(key)`, names as the sender wrote them. */
function natsLookup(headers: unknown): MetadataLookup | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const h = headers as { keys?: unknown; get?: unknown };
  if (typeof h.keys !== 'function' || typeof h.get !== 'function') return undefined;
  const hdrs = headers as { keys(): Iterable<string>; get(key: string): string };
  return (name) => {
    for (const key of hdrs.keys()) if (key.toLowerCase() === name) return hdrs.get(key);
    return undefined;
  };
}

/** A plain record of headers (RabbitMQ's headers table, MQTT 5's user properties). */
function recordLookup(record: unknown): MetadataLookup | undefined {
  if (typeof record !== 'object' || record === null) return undefined;
  const entries = record as Record<string, unknown>;
  return (name) => {
    if (name in entries) return entries[name];
    for (const key of Object.keys(entries)) if (key.toLowerCase() === name) return entries[key];
    return undefined;
  };
}

/**
 * The first of repeated values (gRPC metadata, MQTT user properties and Kafka headers may repeat an
 * entry), as text: Kafka hands header values over as `Buffer`s.
 */
function first(value: unknown): unknown {
  const one: unknown = Array.isArray(value) ? value[0] : value;
  return one instanceof Uint8Array ? Buffer.from(one).toString('utf8') : one;
}

/** Milliseconds left before a gRPC call's deadline (`Date` or epoch milliseconds; `Infinity`: none). */
function grpcCallBudget(call: unknown, now: () => number): number | undefined {
  if (typeof call !== 'object' || call === null) return undefined;
  const getDeadline = (call as { getDeadline?: unknown }).getDeadline;
  if (typeof getDeadline !== 'function') return undefined;
  const deadline = (getDeadline as () => unknown).call(call);
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (typeof at !== 'number' || !Number.isFinite(at)) return undefined;
  return Math.max(0, at - now());
}
