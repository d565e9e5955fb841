import { Transport, type ClientOptions } from '@nestjs/microservices';
import { closestName } from '../../core/internal.js';
import {
  OptionsValidator,
  ResilienceValidationError,
  type OutcomePredicate,
  type ValidationIssue,
} from '../../core/index.js';
import { ResiliencePipelineRegistry, type PipelineConfig } from '../../config/index.js';
import { standardPipelineIssues } from '../options/standard-pipeline.options.js';
import type { RemoteRpcErrorPredicate } from './rpc.predicates.js';
import {
  buildStandardRpcPipeline,
  STANDARD_RPC_PIPELINE,
  standardRpcPipeline,
  type StandardRpcPipelineOptions,
} from './standard-rpc-pipeline.js';
import { NEST_RULES } from '../resilience.messages.js';

/** How one message pattern of a client is sent. @publicApi */
export interface ResilientPatternOptions {
  /** A registered pipeline for this pattern instead of the client's. */
  pipeline?: string;
  /**
   * May a message of this pattern be repeated? `emit` is retried only when true (default false: an event
   * might be handled twice); `send` is retried unless false.
   */
  idempotent?: boolean;
  /** Retry errors the remote handler returned (`RpcException` payloads): all (`true`), or those a predicate accepts. Default false. */
  retryRemoteErrors?: boolean | RemoteRpcErrorPredicate;
  /** Count errors the remote handler returned as circuit-breaker failures. Default false. */
  countRemoteErrors?: boolean | RemoteRpcErrorPredicate;
  /**
   * How long each attempt waits for its reply, in milliseconds: then the attempt fails with
   * `TimeoutRejectedError` (a transport failure: retried, counted) and its pending reply is dropped.
   * Cheaper than a pipeline `timeout` on a fast transport (no `AbortSignal` per attempt). Default none.
   */
  replyTimeout?: number;
  /**
   * How every attempt sends the budget left before the call's deadline (`context.deadline`: the
   * caller's, tightened by the pipeline's timeouts) and the call's criticality, for the remote
   * `RequestDeadlineInterceptor`:
   *
   * - `'metadata'` (default): as `x-request-deadline-ms` and `x-criticality` entries of the transport's
   *   own metadata — NATS headers, RabbitMQ message headers, MQTT 5 user properties (a client with
   *   `protocolVersion: 5`) — as Nest's record builders set them; the data is sent as it is. A transport
   *   without such metadata (TCP, Redis, MQTT 3.1.1, a client with a serializer of its own) sends nothing.
   * - `true`: those entries where the transport has them, and the `x-request-deadline-ms` /
   *   `x-criticality` fields of the message's data (a copy of it; data that is not a plain object is sent
   *   as it is) on every transport — for receivers that read only the data field, and for TCP and Redis.
   *   A handler without the interceptor sees the fields.
   * - `false`: nothing.
   */
  propagateDeadline?: boolean | 'metadata';
}

/** A resilient client, as data: its pipeline and per-pattern choices. @publicApi */
export interface ResilientClientOptions extends Omit<ResilientPatternOptions, 'pipeline'> {
  /**
   * The registered pipeline every message runs through, or options of the standard RPC pipeline
   * (registered as `rpc:<client>`). Default `rpc-standard` (the standard pipeline with its defaults).
   */
  pipeline?: string | StandardRpcPipelineOptions;
  /** One pipeline instance (one circuit) per pattern instead of one per client. Default false. */
  perPattern?: boolean;
  /** Per-pattern options, keyed by the pattern (an object pattern by Nest's route string, e.g. `{"cmd":"sum"}`). */
  patterns?: Record<string, ResilientPatternOptions>;
}

/** A client's options once validated and its pipeline registered. @internal */
export interface ResilientClientSettings {
  readonly name: string;
  readonly pipeline: string;
  readonly perPattern: boolean;
  readonly defaults: ResilientPatternOptions;
  readonly patterns: ReadonlyMap<string, ResilientPatternOptions>;
}

const CLIENT_KEYS = [
  'pipeline',
  'perPattern',
  'patterns',
  'idempotent',
  'retryRemoteErrors',
  'countRemoteErrors',
  'replyTimeout',
  'propagateDeadline',
];
const PATTERN_KEYS = [
  'pipeline',
  'idempotent',
  'retryRemoteErrors',
  'countRemoteErrors',
  'replyTimeout',
  'propagateDeadline',
];

const PROPAGATION_MODES: readonly (boolean | string)[] = [true, false, 'metadata'];

function flagOrPredicate(v: OptionsValidator, path: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean' && typeof value !== 'function') {
    v.add(path, value, NEST_RULES.booleanOrFunction);
  }
}

function pipelineName(v: OptionsValidator, path: string, value: unknown, known: ReadonlySet<string>): void {
  if (typeof value !== 'string' || value === '') {
    v.add(path, value, NEST_RULES.registeredPipelineName);
  } else if (!known.has(value)) {
    v.add(path, value, `is not a registered pipeline (known: ${[...known].sort().join(', ') || 'none'})`);
  }
}

/**
 * Validates every client (all problems of all clients in one `ResilienceValidationError`), registers the
 * pipelines the clients define (the standard one under `rpc-standard`, standard options under
 * `rpc:<client>`) and returns each client's settings. Nothing is registered when anything is invalid.
 *
 * @internal
 */
export function resolveClientSettings(
  clients: unknown,
  registry: ResiliencePipelineRegistry,
  path = 'clients',
  found: readonly ValidationIssue[] = [],
): Map<string, ResilientClientSettings> {
  const v = new OptionsValidator('').addIssues(found);
  const result = new Map<string, ResilientClientSettings>();
  if (typeof clients !== 'object' || clients === null || Array.isArray(clients)) {
    v.add(path, clients, NEST_RULES.namedClients).throwIfInvalid('Invalid resilient RPC clients');
  }
  const known = new Set(registry.pipelineNames);
  const toRegister: Record<string, PipelineConfig> = {};
  const definedAt = new Map<string, { at: string; options: StandardRpcPipelineOptions }>();
  const wantsStandard = (name: string) => name === STANDARD_RPC_PIPELINE && !registry.pipelineNames.includes(name);
  for (const [name, raw] of Object.entries(clients as Record<string, unknown>)) {
    const at = `${path}.${name}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      v.add(at, raw, NEST_RULES.object);
      continue;
    }
    const options = raw as ResilientClientOptions;
    v.child(at).knownKeys(options, CLIENT_KEYS);
    let pipeline: string;
    if (options.pipeline === undefined || typeof options.pipeline === 'string') {
      pipeline = options.pipeline ?? STANDARD_RPC_PIPELINE;
      if (wantsStandard(pipeline)) {
        toRegister[pipeline] = standardRpcPipeline();
        known.add(pipeline);
      }
      pipelineName(v, `${at}.pipeline`, pipeline, known);
    } else {
      pipeline = `rpc:${name}`;
      toRegister[pipeline] = buildStandardRpcPipeline(options.pipeline, v.child(`${at}.pipeline`));
      definedAt.set(pipeline, { at: `${at}.pipeline`, options: options.pipeline });
      known.add(pipeline);
    }
    if (options.perPattern !== undefined) v.boolean(`${at}.perPattern`, options.perPattern);
    if (options.idempotent !== undefined) v.boolean(`${at}.idempotent`, options.idempotent);
    flagOrPredicate(v, `${at}.retryRemoteErrors`, options.retryRemoteErrors);
    flagOrPredicate(v, `${at}.countRemoteErrors`, options.countRemoteErrors);
    v.duration(`${at}.replyTimeout`, options.replyTimeout, { min: 1 });
    v.oneOf(`${at}.propagateDeadline`, options.propagateDeadline, PROPAGATION_MODES);
    const patterns = new Map<string, ResilientPatternOptions>();
    if (options.patterns !== undefined) {
      if (typeof options.patterns !== 'object' || options.patterns === null || Array.isArray(options.patterns)) {
        v.add(`${at}.patterns`, options.patterns, NEST_RULES.keyedByPattern);
      } else {
        for (const [pattern, p] of Object.entries(options.patterns)) {
          const pAt = `${at}.patterns.${pattern}`;
          if (typeof p !== 'object' || p === null || Array.isArray(p)) {
            v.add(pAt, p, NEST_RULES.object);
            continue;
          }
          v.child(pAt).knownKeys(p, PATTERN_KEYS);
          if (p.pipeline !== undefined) {
            if (wantsStandard(p.pipeline)) {
              toRegister[p.pipeline] = standardRpcPipeline();
              known.add(p.pipeline);
            }
            pipelineName(v, `${pAt}.pipeline`, p.pipeline, known);
          }
          if (p.idempotent !== undefined) v.boolean(`${pAt}.idempotent`, p.idempotent);
          flagOrPredicate(v, `${pAt}.retryRemoteErrors`, p.retryRemoteErrors);
          flagOrPredicate(v, `${pAt}.countRemoteErrors`, p.countRemoteErrors);
          v.duration(`${pAt}.replyTimeout`, p.replyTimeout, { min: 1 });
          v.oneOf(`${pAt}.propagateDeadline`, p.propagateDeadline, PROPAGATION_MODES);
          patterns.set(pattern, p);
        }
      }
    }
    const { idempotent, retryRemoteErrors, countRemoteErrors, replyTimeout, propagateDeadline } = options;
    result.set(name, {
      name,
      pipeline,
      perPattern: options.perPattern ?? false,
      defaults: { idempotent, retryRemoteErrors, countRemoteErrors, replyTimeout, propagateDeadline },
      patterns,
    });
  }
  const fresh = Object.fromEntries(Object.entries(toRegister).filter(([n]) => !registry.pipelineNames.includes(n)));
  // Validate the pipelines the clients define along with the clients, so one error lists everything.
  for (const [name, config] of Object.entries(fresh)) {
    try {
      new ResiliencePipelineRegistry({ predicates: predicatesOf(registry) }).addPipelines({ [name]: config });
    } catch (error) {
      if (!(error instanceof ResilienceValidationError)) throw error;
      // Reported at the options the user wrote, not at the pipeline they became.
      const defined = definedAt.get(name);
      v.addIssues(standardPipelineIssues(error.issues, name, defined?.at ?? path, defined?.options));
    }
  }
  v.throwIfInvalid('Invalid resilient RPC clients');
  if (Object.keys(fresh).length > 0) registry.addPipelines(fresh);
  return result;
}

function predicatesOf(registry: ResiliencePipelineRegistry): Record<string, OutcomePredicate<unknown>> {
  const entries: [string, OutcomePredicate<unknown>][] = [];
  for (const name of registry.predicates.names) {
    const predicate = registry.predicates.get(name);
    if (predicate) entries.push([name, predicate]);
  }
  return Object.fromEntries(entries);
}

/** The names of Nest's transports (`Transport.KAFKA` is `6`, its name `KAFKA`). */
const TRANSPORT_NAMES: readonly string[] = Object.keys(Transport).filter((key) => Number.isNaN(Number(key)));

/**
 * Client options for `ClientProxyFactory.create`, with `transport` checked: a `Transport` value, or its name
 * (`'KAFKA'`, as configuration from a file or the environment gives it). Anything else is an issue at
 * `path.transport` with a "did you mean" — Nest's factory would silently make a TCP client of it. Options
 * with a `customClass` are passed on as they are. `undefined` when the transport is unknown.
 *
 * @internal
 */
export function resolveClientTransport(
  v: OptionsValidator,
  path: string,
  options: ClientOptions,
): ClientOptions | undefined {
  if ('customClass' in options && options.customClass !== undefined) return options;
  const transport = (options as { transport?: unknown }).transport;
  if (transport === undefined) return options; // Nest's default: TCP
  if (typeof transport === 'number' && Transport[transport] !== undefined) return options;
  if (typeof transport === 'string' && TRANSPORT_NAMES.includes(transport)) {
    return { ...options, transport: Transport[transport as keyof typeof Transport] } as ClientOptions;
  }
  const closest = typeof transport === 'string' ? closestName(transport, TRANSPORT_NAMES) : undefined;
  const hint = closest === undefined ? '' : `did you mean "${closest}"? `;
  v.add(
    `${path}.transport`,
    transport,
    `is not a transport of @nestjs/microservices (${hint}known: ${TRANSPORT_NAMES.join(', ')})`,
  );
  return undefined;
}
