import type { ClientProxy } from '@nestjs/microservices';
import { Observable } from 'rxjs';
import {
  ResilienceContext,
  setCriticality,
  TimeoutRejectedError,
  type ResiliencePipeline,
  type TimerHandle,
} from '../../core/index.js';
import { type PipelineConfig, type ResiliencePipelineRegistry, type StrategyConfig } from '../../config/index.js';
import { currentResilienceContext } from '../execution/resilience-context.storage.js';
import { remainingBudget, requestBudgetHeaders, withRequestBudget } from '../deadlines/request-deadline.propagation.js';
import { callerCriticality } from '../execution/route-criticality.js';
import type { ResilientClientSettings, ResilientPatternOptions } from './resilient-client.options.js';
import { RPC_CALL_INFO, type RemoteRpcErrorPredicate, type RpcCallInfo } from './rpc.predicates.js';
import { transportMetadataWriter, type TransportMetadataWriter } from './transport-metadata.writer.js';

/** Per-call options of `send` and `emit`. @publicApi */
export interface ResilientCallOptions {
  /**
   * Cancels the call (and its retries) from outside. Default: the signal of the decorated method (or
   * intercepted handler) making the call, when it is made before that method's first `await`.
   */
  signal?: AbortSignal;
}

/** What a client has done since it was made. @publicApi */
export interface ResilientClientMetrics {
  /** Messages handed to the underlying client (first attempts and retries). */
  readonly attempts: number;
  /** Calls that delivered their reply (or, for `emit`, whose event was dispatched). */
  readonly succeeded: number;
  /** Calls that ended with an error. */
  readonly failed: number;
  /** Calls given up by their caller (unsubscribe, abort): the running attempt's reply is dropped. */
  readonly cancelled: number;
}

interface PatternPlan {
  readonly pipeline: ResiliencePipeline<unknown>;
  readonly route: string;
  /** Whether a strategy of the pipeline can abort an attempt (a timeout, hedging): attempts follow the signal. */
  readonly abortable: boolean;
  /** How long an attempt waits for its reply, in milliseconds. */
  readonly replyTimeout: number | undefined;
  /** Whether each attempt sends the budget left before the call's deadline in the transport's metadata. */
  readonly metadataBudget: boolean;
  /** Whether each attempt sends the budget left before the call's deadline in the message's data. */
  readonly dataBudget: boolean;
  readonly sendKey: string;
  readonly emitKey: string;
  readonly send: RpcCallInfo;
  readonly emit: RpcCallInfo;
}

const NEVER: RemoteRpcErrorPredicate = () => false;
const ALWAYS: RemoteRpcErrorPredicate = () => true;

function remotePredicate(value: boolean | RemoteRpcErrorPredicate | undefined): RemoteRpcErrorPredicate {
  if (typeof value === 'function') return value;
  return value === true ? ALWAYS : NEVER;
}

/**
 * A `ClientProxy` whose `send` and `emit` run through a named pipeline (per client, or per pattern).
 *
 * - `send` is cold like the proxy's: each subscription runs the pipeline, each attempt subscribes to the
 *   underlying `send` anew, every value of the successful attempt is emitted (in order, when it
 *   completes), and unsubscribing aborts the call — the pending reply is dropped and the call counted as
 *   cancelled.
 * - `emit` dispatches at once (hot, like the proxy's) and is retried only for a pattern marked
 *   `idempotent`.
 *
 * @publicApi
 */
export class ResilientClientProxy {
  private readonly plans = new Map<string, PatternPlan>();
  /** How the client's transport carries metadata; `undefined` when it has none. */
  private readonly metadataWriter: TransportMetadataWriter | undefined;
  private counts = { attempts: 0, succeeded: 0, failed: 0, cancelled: 0 };

  constructor(
    /** The underlying client. */
    readonly client: ClientProxy,
    private readonly registry: ResiliencePipelineRegistry,
    private readonly settings: ResilientClientSettings,
  ) {
    this.metadataWriter = transportMetadataWriter(client);
  }

  /** The client's name. */
  get name(): string {
    return this.settings.name;
  }

  /** Call figures of this client since it was created. */
  get metrics(): ResilientClientMetrics {
    return { ...this.counts };
  }

  /** Sends a message and emits the remote handler's reply (every value of it); see the class notes. */
  send<TResult = unknown, TInput = unknown>(
    pattern: unknown,
    data: TInput,
    options?: ResilientCallOptions,
  ): Observable<TResult> {
    const plan = this.planFor(pattern);
    return new Observable<TResult>((subscriber) => {
      const call = new RunningCall(plan, plan.send, options?.signal);
      let settled = false;
      this.run(call, (ctx) => this.client.send(pattern, this.dataFor(plan, data, ctx))).then(
        (values) => {
          settled = true;
          this.counts.succeeded++;
          for (const value of values) subscriber.next(value as TResult);
          subscriber.complete();
        },
        (error: unknown) => {
          settled = true;
          if (call.unsubscribed) return;
          if (call.aborted) this.counts.cancelled++;
          else this.counts.failed++;
          subscriber.error(error);
        },
      );
      return () => {
        if (settled) return;
        this.counts.cancelled++;
        call.cancel(new DOMException('The subscriber unsubscribed.', 'AbortError'), true);
      };
    });
  }

  /**
   * Emits an event now (retried only for a pattern marked idempotent). The Observable completes once the
   * event is dispatched and errors with the final failure; subscribing is optional.
   */
  emit<TResult = unknown, TInput = unknown>(
    pattern: unknown,
    data: TInput,
    options?: ResilientCallOptions,
  ): Observable<TResult> {
    const plan = this.planFor(pattern);
    const call = new RunningCall(plan, plan.emit, options?.signal);
    const result = this.run(call, (ctx) => this.client.emit(pattern, this.dataFor(plan, data, ctx)));
    result.then(
      () => this.counts.succeeded++,
      () => (call.aborted ? this.counts.cancelled++ : this.counts.failed++),
    );
    return new Observable<TResult>((subscriber) => {
      result.then(
        (values) => {
          for (const value of values) subscriber.next(value as TResult);
          subscriber.complete();
        },
        (error: unknown) => subscriber.error(error),
      );
    });
  }

  /** Connects the underlying client. */
  connect(): Promise<unknown> {
    return this.client.connect();
  }

  /** Closes the underlying client. */
  close(): unknown {
    return this.client.close();
  }

  /** The pipeline messages of `pattern` run through (one instance per client, or per pattern). */
  pipelineFor(pattern: unknown): ResiliencePipeline<unknown> {
    return this.planFor(pattern).pipeline;
  }

  private planFor(pattern: unknown): PatternPlan {
    const route = patternRoute(pattern);
    let plan = this.plans.get(route);
    if (plan) return plan;
    const { name, perPattern, defaults, patterns } = this.settings;
    const registry = this.registry;
    const own: ResilientPatternOptions = patterns.get(route) ?? {};
    const pipelineName = own.pipeline ?? this.settings.pipeline;
    const key = perPattern ? `${name}:${route}` : name;
    const retryRemoteErrors = remotePredicate(own.retryRemoteErrors ?? defaults.retryRemoteErrors);
    const countRemoteErrors = remotePredicate(own.countRemoteErrors ?? defaults.countRemoteErrors);
    const idempotent = own.idempotent ?? defaults.idempotent;
    const info = { client: name, pattern: route, retryRemoteErrors, countRemoteErrors };
    const propagation = own.propagateDeadline ?? defaults.propagateDeadline ?? 'metadata';
    plan = {
      pipeline: this.registry.getPipeline(pipelineName, key),
      route,
      // Read at each call: a reload may add or drop the strategies that abort attempts.
      get abortable() {
        return canAbortAttempts(registry.getPipelineConfig(pipelineName));
      },
      replyTimeout: own.replyTimeout ?? defaults.replyTimeout,
      metadataBudget: propagation !== false && this.metadataWriter !== undefined,
      dataBudget: propagation === true,
      sendKey: `${name} send ${route}`,
      emitKey: `${name} emit ${route}`,
      send: { ...info, kind: 'send', retryable: idempotent !== false },
      emit: { ...info, kind: 'emit', retryable: idempotent === true },
    };
    this.plans.set(route, plan);
    return plan;
  }

  /**
   * What an attempt hands to the client: the data, with the budget left before the attempt's deadline
   * and the call's criticality (when not `default`) in the transport's metadata (a record of the
   * transport) and / or in the data's fields, as the pattern propagates them.
   */
  private dataFor(plan: PatternPlan, data: unknown, ctx: ResilienceContext): unknown {
    if (!plan.metadataBudget && !plan.dataBudget) return data;
    const budget = remainingBudget(ctx, this.registry.timeProvider);
    const criticality = callerCriticality(ctx);
    const sent = plan.dataBudget ? withRequestBudget(data, budget, criticality) : data;
    if (!plan.metadataBudget) return sent;
    const entries = requestBudgetHeaders(budget, criticality);
    return entries ? this.metadataWriter!(sent, entries) : sent;
  }

  private run(call: RunningCall, start: (ctx: ResilienceContext) => Observable<unknown>): Promise<unknown[]> {
    const done = call.plan.pipeline.execute((ctx) => this.attempt(ctx, call, start), call.context);
    if (call.linked) {
      const release = () => call.release();
      done.then(release, release);
    }
    return done;
  }

  /**
   * One attempt: subscribes to the underlying call and collects its values. It ends early when the
   * caller cancels, when no reply comes within `replyTimeout`, or — for a pipeline whose strategies can
   * abort an attempt (a timeout, hedging) or a call with a signal — when the attempt's signal aborts.
   * Listening to a signal is what costs most on a fast transport, so it is done only then.
   */
  private attempt(
    ctx: ResilienceContext,
    call: RunningCall,
    start: (ctx: ResilienceContext) => Observable<unknown>,
  ): Promise<unknown[]> {
    if (call.aborted) return Promise.reject(call.reason);
    // A message that may not be repeated is never sent twice, whatever the pipeline's predicates say.
    if (ctx.attemptNumber > 0 && !call.info.retryable) return Promise.reject(call.firstError);
    this.counts.attempts++;
    const { replyTimeout } = call.plan;
    const signal = call.plan.abortable || call.hasSignal ? ctx.signal : undefined;
    if (signal?.aborted) return Promise.reject(reasonOf(signal));
    const time = this.registry.timeProvider;
    return new Promise<unknown[]>((resolve, reject) => {
      const values: unknown[] = [];
      let timer: TimerHandle = undefined;
      let timing = false;
      let ended = false;
      const end = (): boolean => {
        if (ended) return false;
        ended = true;
        call.running = undefined;
        if (timing) time.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        return true;
      };
      const stop = (reason: unknown) => {
        if (!end()) return;
        call.firstError ??= reason;
        subscription.unsubscribe();
        reject(reason);
      };
      const onAbort = () => stop(reasonOf(signal!));
      call.running = stop;
      const subscription = start(ctx).subscribe({
        next: (value) => values.push(value),
        error: (error: unknown) => {
          if (!end()) return;
          call.firstError ??= error;
          reject(error);
        },
        complete: () => {
          if (end()) resolve(values);
        },
      });
      if (ended) return; // the underlying call ended synchronously
      signal?.addEventListener('abort', onAbort, { once: true });
      if (replyTimeout !== undefined) {
        timer = time.setTimeout(() => stop(new TimeoutRejectedError(replyTimeout)), replyTimeout);
        timing = true;
      }
    });
  }
}

/** One `send` or `emit` with its retries: its context, and how to cancel the attempt in flight. */
class RunningCall {
  readonly context: ResilienceContext;
  /** Ends the attempt in flight (unsubscribes it), rejecting it with the reason. */
  running: ((reason: unknown) => void) | undefined;
  /** The caller unsubscribed (nobody is told about the end). */
  unsubscribed = false;
  /** What the first failed attempt ended with. */
  firstError: unknown;
  private cancelled = false;
  private cancelReason: unknown;
  private readonly controller: AbortController | undefined;
  private readonly parent: AbortSignal | undefined;

  constructor(
    readonly plan: PatternPlan,
    readonly info: RpcCallInfo,
    given: AbortSignal | undefined,
  ) {
    // Inside a decorated method or an intercepted handler, the call inherits that call's signal, deadline
    // and criticality.
    const outer = currentResilienceContext();
    this.parent = given ?? outer?.signal;
    // A signal per call is made only where signals are followed anyway (a caller's signal, a pipeline
    // that can abort attempts): AbortSignals are what costs most per call on a fast transport.
    if (this.parent || plan.abortable) this.controller = new AbortController();
    if (this.parent?.aborted) {
      this.controller!.abort(this.parent.reason);
    } else if (this.parent) {
      const parent = this.parent;
      this.onParentAbort = () => this.cancel(reasonOf(parent));
      parent.addEventListener('abort', this.onParentAbort, { once: true });
    }
    this.context = new ResilienceContext({
      operationKey: info.kind === 'send' ? plan.sendKey : plan.emitKey,
      signal: this.controller?.signal,
      deadline: outer?.deadline,
    });
    this.context.properties.set(RPC_CALL_INFO, info);
    const criticality = callerCriticality(outer);
    if (criticality !== undefined) setCriticality(this.context, criticality);
  }

  get hasSignal(): boolean {
    return this.controller !== undefined;
  }

  get aborted(): boolean {
    return this.cancelled || (this.controller?.signal.aborted ?? false);
  }

  get reason(): unknown {
    return this.cancelled ? this.cancelReason : reasonOf(this.controller!.signal);
  }

  cancel(reason: unknown, unsubscribed = false): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.cancelReason = reason;
    this.unsubscribed = unsubscribed;
    this.release();
    this.controller?.abort(reason);
    this.running?.(reason);
  }

  /** Whether the call listens to a caller's signal (and must stop listening when it ends). */
  get linked(): boolean {
    return this.parent !== undefined;
  }

  /** Stops following the caller's signal (bound only for calls that follow one). */
  release(): void {
    if (this.onParentAbort) this.parent!.removeEventListener('abort', this.onParentAbort);
  }

  private readonly onParentAbort: (() => void) | undefined;
}

/** Whether a pipeline built from `config` may abort an attempt (unknown configurations may). */
function canAbortAttempts(config: PipelineConfig | undefined): boolean {
  if (!config) return true;
  if (config.strategies) return config.strategies.some((s: StrategyConfig) => ABORTING.has(s.type));
  return config.timeout !== undefined || config.totalTimeout !== undefined || config.hedging !== undefined;
}

const ABORTING: ReadonlySet<string> = new Set(['timeout', 'hedging']);

function reasonOf(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * A pattern as the route string Nest matches handlers by: a string or number as it is, an object as JSON
 * with its keys sorted (recursively).
 *
 * @publicApi
 */
export function patternRoute(pattern: unknown): string {
  if (typeof pattern === 'string' || typeof pattern === 'number') return `${pattern}`;
  if (typeof pattern !== 'object' || pattern === null) return String(pattern);
  const keys = Object.keys(pattern).sort((a, b) => a.localeCompare(b));
  const parts = keys.map((key) => {
    const value = (pattern as Record<string, unknown>)[key];
    const rendered = typeof value === 'string' ? JSON.stringify(value) : patternRoute(value);
    return `${JSON.stringify(key)}:${rendered}`;
  });
  return `{${parts.join(',')}}`;
}
