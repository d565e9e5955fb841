import type { ClientProxy } from '@nestjs/microservices';
import { Observable } from 'rxjs';
import { ResilienceContext, type ResiliencePipeline, type ResiliencePipelineRegistry } from '../../core/index.js';
import { currentResilienceContext } from '../index.js';
import type { ResilientClientSettings, ResilientPatternOptions } from './resilient-client.options.js';
import { RPC_CALL_INFO, type RemoteRpcErrorPredicate, type RpcCallInfo } from './rpc.predicates.js';

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
  private counts = { attempts: 0, succeeded: 0, failed: 0, cancelled: 0 };

  constructor(
    /** The underlying client. */
    readonly client: ClientProxy,
    private readonly registry: ResiliencePipelineRegistry,
    private readonly settings: ResilientClientSettings,
  ) {}

  /** The client's name. */
  get name(): string {
    return this.settings.name;
  }

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
      const call = this.startCall(plan, plan.send, options?.signal);
      let settled = false;
      let unsubscribed = false;
      call
        .run(() => this.client.send(pattern, data))
        .then(
          (values) => {
            settled = true;
            this.counts.succeeded++;
            for (const value of values) subscriber.next(value as TResult);
            subscriber.complete();
          },
          (error: unknown) => {
            settled = true;
            if (unsubscribed) return;
            if (call.signal.aborted) this.counts.cancelled++;
            else this.counts.failed++;
            subscriber.error(error);
          },
        );
      return () => {
        if (settled) return;
        unsubscribed = true;
        this.counts.cancelled++;
        call.abort(new DOMException('The subscriber unsubscribed.', 'AbortError'));
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
    const call = this.startCall(plan, plan.emit, options?.signal);
    const result = call.run(() => this.client.emit(pattern, data));
    result.then(
      () => this.counts.succeeded++,
      () => (call.signal.aborted ? this.counts.cancelled++ : this.counts.failed++),
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
    const own: ResilientPatternOptions = patterns.get(route) ?? {};
    const pipelineName = own.pipeline ?? this.settings.pipeline;
    const key = perPattern ? `${name}:${route}` : name;
    const retryRemoteErrors = remotePredicate(own.retryRemoteErrors ?? defaults.retryRemoteErrors);
    const countRemoteErrors = remotePredicate(own.countRemoteErrors ?? defaults.countRemoteErrors);
    const idempotent = own.idempotent ?? defaults.idempotent;
    const info = { client: name, pattern: route, retryRemoteErrors, countRemoteErrors };
    plan = {
      pipeline: this.registry.getPipeline(pipelineName, key),
      route,
      send: { ...info, kind: 'send', retryable: idempotent !== false },
      emit: { ...info, kind: 'emit', retryable: idempotent === true },
    };
    this.plans.set(route, plan);
    return plan;
  }

  private startCall(plan: PatternPlan, info: RpcCallInfo, given: AbortSignal | undefined): RunningCall {
    const controller = new AbortController();
    // Inside a decorated method or an intercepted handler, the call inherits that call's signal.
    const parent = given ?? currentResilienceContext()?.signal;
    const onParentAbort = () => controller.abort(parent!.reason);
    if (parent?.aborted) controller.abort(parent.reason);
    else parent?.addEventListener('abort', onParentAbort, { once: true });
    const context = new ResilienceContext({
      operationKey: `${this.settings.name} ${info.kind} ${plan.route}`,
      signal: controller.signal,
    });
    context.properties.set(RPC_CALL_INFO, info);
    const release = () => parent?.removeEventListener('abort', onParentAbort);
    return {
      signal: controller.signal,
      abort: (reason) => {
        release();
        controller.abort(reason);
      },
      run: (start) => {
        const done = plan.pipeline.execute((ctx) => this.attempt(ctx, start), context);
        done.then(release, release);
        return done;
      },
    };
  }

  /** One attempt: subscribes to the underlying call, collects its values, unsubscribes when aborted. */
  private attempt(ctx: ResilienceContext, start: () => Observable<unknown>): Promise<unknown[]> {
    this.counts.attempts++;
    const signal = ctx.signal;
    if (signal.aborted) return Promise.reject(reasonOf(signal));
    return new Promise<unknown[]>((resolve, reject) => {
      const values: unknown[] = [];
      const onAbort = () => {
        subscription.unsubscribe();
        reject(reasonOf(signal));
      };
      const subscription = start().subscribe({
        next: (value) => values.push(value),
        error: (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
        complete: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(values);
        },
      });
      // Added once subscribed: an underlying call that ended synchronously leaves nothing behind.
      if (!subscription.closed) signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

interface RunningCall {
  readonly signal: AbortSignal;
  abort(reason: unknown): void;
  run(start: () => Observable<unknown>): Promise<unknown[]>;
}

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
