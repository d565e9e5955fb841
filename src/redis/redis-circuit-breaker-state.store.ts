import type { Cluster, Redis } from 'ioredis';
import { RedisAvailability, type StoreLogger } from './redis-availability.js';
import { DEFAULT_OPERATION_TIMEOUT, withTimeout } from './redis.util.js';
import {
  InMemoryCircuitBreakerStateStore,
  MAX_TIMER_DELAY,
  systemTimeProvider,
  type CircuitAcquireResult,
  type CircuitBreakerStateStore,
  type CircuitCallResult,
  type CircuitMetricsSnapshot,
  type CircuitPermit,
  type CircuitPolicy,
  type CircuitSnapshot,
  type CircuitState,
  type CircuitTransition,
  type CircuitTransitionReason,
  type TimeProvider,
} from '../core/index.js';
import { CIRCUIT_SCRIPT } from './redis-circuit-state.scripts.js';
import { SuccessBatcher, type SuccessPayload } from './redis-success.batcher.js';

/** What the store does while Redis cannot be reached. @publicApi */
export type StoreOutageMode =
  /** Keep a circuit per key in this process (default): the breaker keeps protecting, locally. */
  | 'local'
  /** Let every call through, as if the circuit were closed. */
  | 'allow'
  /** Reject every call with `BrokenCircuitError` (fail closed, in the security sense). */
  | 'reject';

/** @publicApi */
export interface RedisCircuitBreakerStateStoreOptions {
  /**
   * An ioredis client: a `Redis` (one server, or a Sentinel-managed primary) or a `Cluster`. The store
   * never closes a client it was given.
   */
  client: Redis | Cluster;
  /** Namespaces the keys (one per application). Default `nest-resilience`. */
  keyPrefix?: string;
  /** The longest a call waits for Redis before the outage mode takes over, in ms. Default 100. */
  operationTimeout?: number;
  /** How long after a failure Redis is left alone before it is tried again, in ms. Default 1000. */
  retryInterval?: number;
  /** Default `local`. */
  outageMode?: StoreOutageMode;
  /**
   * Serve `acquire` of a circuit last seen closed from memory for this many ms, and send successes in
   * batches: at most one Redis round trip per `localCacheTtl` on the success path, at the price of
   * seeing an opening elsewhere up to `localCacheTtl` late. Default 0 (every call asks Redis).
   */
  localCacheTtl?: number;
  /**
   * Successes are sent with the next call; at the latest after this many ms (or `localCacheTtl`, if
   * longer). Each carries the time it happened. Default 100.
   */
  flushInterval?: number;
  /** Told once when Redis becomes unreachable and once when it is back. Default: `console`. */
  logger?: StoreLogger;
  /** Called on each outage and recovery (e.g. to emit telemetry). */
  onAvailabilityChange?: (available: boolean, error?: unknown) => void;
  timeProvider?: TimeProvider;
}

type ScriptReply = (string | number | null)[];

const LOCAL = 'local';

/** A permit handed out by the local fallback during an outage. */
interface LocalPermit extends CircuitPermit {
  readonly origin: typeof LOCAL;
}

/**
 * Circuit-breaker state in Redis, shared by every process of an application: admission and outcome
 * recording are one atomic Lua script each, so across any number of instances a half-open circuit hands
 * out exactly `permittedCallsInHalfOpen` probes and an opening is seen by every instance on its next call.
 * All four breaker kinds work; each circuit is one hash (its buckets or count window included), so a
 * script touches one key and one cluster slot. Successes are piggybacked on the next call, so the closed path costs one round trip.
 *
 * When Redis is slow or down, no call waits longer than `operationTimeout`: the store switches to its
 * outage mode, logs once, and tries Redis again after `retryInterval`. Circuits that opened locally during
 * the outage are written back when Redis returns.
 *
 * @publicApi
 */
export class RedisCircuitBreakerStateStore implements CircuitBreakerStateStore {
  private readonly client: Redis | Cluster;
  private readonly prefix: string;
  private readonly operationTimeout: number;
  private readonly outageMode: StoreOutageMode;
  private readonly cacheTtl: number;
  private readonly time: TimeProvider;
  private readonly local = new InMemoryCircuitBreakerStateStore();
  private readonly pending: SuccessBatcher;
  private readonly closedUntil = new Map<string, { until: number; generation: number }>();
  private readonly availability: RedisAvailability;
  private readonly touchedLocally = new Map<string, CircuitPolicy>();
  /** The write-back of local openings in progress after an outage, shared by every call meanwhile. */
  private recovering?: Promise<void>;

  constructor(private readonly options: RedisCircuitBreakerStateStoreOptions) {
    this.client = options.client;
    this.prefix = options.keyPrefix ?? 'nest-resilience';
    this.operationTimeout = options.operationTimeout ?? DEFAULT_OPERATION_TIMEOUT;
    this.outageMode = options.outageMode ?? 'local';
    this.cacheTtl = options.localCacheTtl ?? 0;
    this.time = options.timeProvider ?? systemTimeProvider;
    this.pending = new SuccessBatcher({
      flushAfter: Math.max(options.flushInterval ?? 100, this.cacheTtl),
      time: this.time,
      flush: () => void this.flush(),
    });
    this.availability = new RedisAvailability({
      what: 'Redis circuit-breaker store',
      outageMode: this.outageMode,
      retryInterval: options.retryInterval ?? 1_000,
      time: this.time,
      logger: options.logger ?? console,
      onChange: options.onAvailabilityChange,
    });
    // Stryker disable next-line ConditionalExpression: equivalent as "true" — defining the script again on a shared client replaces it with the same script
    if (typeof (this.client as { nestResilienceCircuit?: unknown }).nestResilienceCircuit !== 'function') {
      this.client.defineCommand('nestResilienceCircuit', { numberOfKeys: 1, lua: CIRCUIT_SCRIPT });
    }
  }

  /** True while Redis is considered unreachable. */
  get isDegraded(): boolean {
    return this.availability.isDegraded;
  }

  /**
   * The Redis key of a circuit: one hash, `<keyPrefix>:cb:{<circuit key>}`. Hash-tagged, so anything
   * added for the circuit later stays in its cluster slot.
   */
  keyFor(circuitKey: string): string {
    return `${this.prefix}:cb:{${circuitKey}}`;
  }

  acquire(key: string, policy: CircuitPolicy, now: number): CircuitAcquireResult | Promise<CircuitAcquireResult> {
    if (this.cacheTtl > 0) {
      const cached = this.closedUntil.get(key);
      if (cached && now < cached.until)
        return { state: 'closed', permit: { generation: cached.generation, probe: false } };
    }
    return this.run(
      key,
      policy,
      now,
      'acquire',
      [],
      (reply) => {
        const [admitted, state, generation, probe, retryAfter, verdictDueAt] = reply;
        const transition = toTransition(reply, 6);
        const st = state as CircuitState;
        if (st === 'closed' && this.cacheTtl > 0)
          this.closedUntil.set(key, { until: now + this.cacheTtl, generation: Number(generation) });
        else this.closedUntil.delete(key);
        return {
          state: st,
          permit: admitted === 1 ? { generation: Number(generation), probe: probe === 1 } : undefined,
          retryAfter: Number(retryAfter) >= 0 ? Number(retryAfter) : undefined,
          verdictDueAt: Number(verdictDueAt) >= 0 ? Number(verdictDueAt) : undefined,
          transition,
        };
      },
      () => this.localAcquire(key, policy, now),
    );
  }

  record(
    key: string,
    policy: CircuitPolicy,
    permit: CircuitPermit,
    result: CircuitCallResult,
    now: number,
  ): CircuitTransition | undefined | Promise<CircuitTransition | undefined> {
    if ((permit as LocalPermit).origin === LOCAL) return this.local.record(key, policy, permit, result, now);
    if (result === 'success' && !permit.probe) {
      // Closed-path successes never change the state: send them with the next call.
      this.pending.add(key, policy, permit.generation, now);
      return undefined;
    }
    this.closedUntil.delete(key);
    return this.run(
      key,
      policy,
      now,
      'record',
      [permit.generation, permit.probe ? '1' : '0', result],
      (reply) => toTransition(reply, 2),
      () => undefined,
    );
  }

  isolate(key: string, policy: CircuitPolicy, now: number): Promise<CircuitTransition | undefined> {
    return this.manual('isolate', key, policy, now, () => this.local.isolate(key, policy, now));
  }

  close(key: string, policy: CircuitPolicy, now: number): Promise<CircuitTransition | undefined> {
    return this.manual('close', key, policy, now, () => this.local.close(key, policy, now));
  }

  async exportSnapshot(key: string, policy: CircuitPolicy): Promise<CircuitSnapshot> {
    const reply = await this.call(key, policy, this.time.now(), 'export', []);
    const [state, gen, bu, lbd, hos, hoa, pi, ps, lta, cf, w, ring] = reply;
    return {
      version: 1,
      state: state as CircuitState,
      generation: Number(gen),
      blockedUntil: Number(bu),
      lastBreakDuration: Number(lbd),
      halfOpenSince: Number(hos),
      halfOpenAttempts: Number(hoa),
      probesIssued: Number(pi),
      probesSucceeded: Number(ps),
      lastTransitionAt: Number(lta),
      metrics: toMetrics(policy, Number(cf), String(w ?? ''), String(ring ?? '')),
    };
  }

  async importSnapshot(key: string, policy: CircuitPolicy, snapshot: CircuitSnapshot): Promise<void> {
    this.closedUntil.delete(key);
    const m = snapshot.metrics;
    const payload =
      m.kind === 'consecutive'
        ? String(m.consecutiveFailures)
        : m.kind === 'count-window'
          ? m.outcomes
          : m.windows.map(([s, ok, f]) => `${s}:${ok}:${f}`).join('|');
    await this.call(key, policy, this.time.now(), 'import', [
      snapshot.state,
      snapshot.generation,
      snapshot.blockedUntil,
      snapshot.lastBreakDuration,
      snapshot.halfOpenSince,
      snapshot.halfOpenAttempts,
      snapshot.lastTransitionAt,
      payload,
    ]);
  }

  /** Sends the successes still waiting, and stops the flush timer. Call before closing the client. */
  async flush(): Promise<void> {
    const batches = this.pending.takeAll();
    if (batches.length === 0) return;
    if (this.availability.skip) return; // Redis is away: these successes would only lower failure ratios late
    const writtenBack = this.writeBackIfRecovering();
    const now = this.time.now();
    await Promise.all(
      batches.map(({ key, policy, payload }) =>
        afterWriteBack(this.send(key, policy, now, 'export', [], payload), writtenBack).then(
          () => this.answered(),
          (error: unknown) => this.failed(error),
        ),
      ),
    );
  }

  // ------------------------------------------------------------------------------------------------

  /** A manual isolate or close: never served from the cache. */
  private manual(
    op: 'isolate' | 'close',
    key: string,
    policy: CircuitPolicy,
    now: number,
    local: () => CircuitTransition | undefined,
  ): Promise<CircuitTransition | undefined> {
    this.closedUntil.delete(key);
    return Promise.resolve(this.run(key, policy, now, op, [], (reply) => toTransition(reply, 2), local));
  }

  /**
   * Runs the script for a key (carrying its pending successes) within the time budget, or falls back.
   * While Redis is marked unavailable the fallback answers at once, synchronously.
   */
  private run<R>(
    key: string,
    policy: CircuitPolicy,
    now: number,
    op: string,
    args: (string | number)[],
    parse: (reply: ScriptReply) => R,
    fallback: () => R,
  ): R | Promise<R> {
    if (this.availability.skip) return fallback();
    const writtenBack = this.writeBackIfRecovering();
    const pending = this.pending.take(key);
    return afterWriteBack(this.send(key, policy, now, op, args, pending), writtenBack).then(
      async (reply): Promise<R> => {
        this.answered();
        const parsed = parse(reply);
        const transition = transitionOf(parsed);
        if (transition?.to === 'open' && policy.breakDurationGenerator) {
          await this.applyGeneratedBreak(key, policy, reply, transition);
          // The call that opened it (a half-open wait ran out) waits the generated break too.
          if (op === 'acquire') (parsed as { retryAfter?: number }).retryAfter = transition.breakDuration;
        }
        return parsed;
      },
      (error: unknown) => {
        this.failed(error);
        return fallback();
      },
    );
  }

  private answered(): void {
    // Back after an outage: the circuits kept here follow Redis again.
    if (this.availability.answered()) {
      for (const key of this.touchedLocally.keys()) this.local.delete(key);
      this.touchedLocally.clear();
    }
  }

  private failed(error: unknown): void {
    this.availability.failed(error);
    // What was seen closed may no longer be: the cache is not trusted across a failure.
    this.closedUntil.clear();
  }

  /** The script opened with the fixed break; a generator's break replaces it (same generation only). */
  private async applyGeneratedBreak(
    key: string,
    policy: CircuitPolicy,
    reply: ScriptReply,
    t: CircuitTransition,
  ): Promise<void> {
    // An acquire's reply starts with `admitted` (a number), the others' with the state.
    const acquired = typeof reply[0] === 'number';
    const generation = Number(reply[acquired ? 2 : 1]);
    const generated = policy.breakDurationGenerator!({
      failureCount: t.health?.failures ?? 0,
      failureRatio: t.health?.failureRatio ?? 0,
      halfOpenAttempts: Number(reply[(acquired ? 6 : 2) + 6]),
    });
    if (typeof generated !== 'number' || !(generated >= 0)) return;
    const duration = Math.min(generated, MAX_TIMER_DELAY);
    (t as { breakDuration?: number }).breakDuration = duration;
    await this.send(key, policy, this.time.now(), 'setBreak', [generation, Math.round(duration)]).catch(
      () => undefined,
    );
  }

  private call(
    key: string,
    policy: CircuitPolicy,
    now: number,
    op: string,
    args: (string | number)[],
  ): Promise<ScriptReply> {
    return this.send(key, policy, now, op, args, this.pending.take(key));
  }

  /** One script call, raced against the operation timeout. */
  private send(
    key: string,
    policy: CircuitPolicy,
    now: number,
    op: string,
    args: (string | number)[],
    pending?: SuccessPayload,
  ): Promise<ScriptReply> {
    const ttl = Math.max(
      60_000,
      2 * (policy.kind === 'time-window' || policy.kind === 'slow-call' ? policy.samplingDuration : 0),
      2 * policy.breakDuration + policy.maxHalfOpenWait,
    );
    const command = (
      this.client as unknown as { nestResilienceCircuit: (...a: unknown[]) => Promise<ScriptReply> }
    ).nestResilienceCircuit(
      this.keyFor(key),
      op,
      now,
      policy.kind,
      policy.failureThreshold,
      policy.failureRatio,
      policy.minimumThroughput,
      policy.samplingDuration,
      policy.windowSize,
      policy.breakDuration,
      policy.permittedCallsInHalfOpen,
      policy.successThresholdInHalfOpen,
      policy.maxHalfOpenWait,
      ttl,
      pending?.generation ?? -1,
      pending?.groups ?? '',
      ...args,
    );
    return withTimeout(command, this.operationTimeout);
  }

  private localAcquire(key: string, policy: CircuitPolicy, now: number): CircuitAcquireResult {
    switch (this.outageMode) {
      case 'allow':
        return { state: 'closed', permit: { generation: -1, probe: false, origin: LOCAL } as LocalPermit };
      case 'reject':
        return { state: 'open', retryAfter: this.availability.retryAfter(now) };
      case 'local': {
        this.touchedLocally.set(key, policy);
        const decision = this.local.acquire(key, policy, now);
        return decision.permit
          ? { ...decision, permit: { ...decision.permit, origin: LOCAL } as LocalPermit }
          : decision;
      }
    }
  }

  /**
   * When Redis is tried again after an outage, the circuits that opened (or were isolated) here meanwhile
   * are written back to it — sent ahead of the call that tries, so Redis decides that call, and every later
   * one, knowing them: no call of this process or another passes such a circuit, and a manual change sent
   * as Redis returns is not undone by the write-back. Calls made meanwhile share the write-back; it counts
   * as answered only with theirs, within the same time budget. Until then the local circuits are kept.
   */
  private writeBackIfRecovering(): Promise<void> | undefined {
    if (!this.availability.isDegraded) return undefined;
    this.recovering ??= this.writeBackOpenings().finally(() => (this.recovering = undefined));
    return this.recovering;
  }

  private async writeBackOpenings(): Promise<void> {
    const imports: Promise<void>[] = [];
    for (const [key, policy] of this.touchedLocally) {
      const snapshot = this.local.exportSnapshot(key, policy);
      if (snapshot.state === 'open' || snapshot.state === 'isolated') {
        imports.push(this.importSnapshot(key, policy, snapshot));
      }
    }
    await Promise.all(imports);
  }
}

/** The reply of a script call sent after a write-back, once both are answered (either failure fails it). */
function afterWriteBack(sent: Promise<ScriptReply>, writtenBack: Promise<void> | undefined): Promise<ScriptReply> {
  return writtenBack ? Promise.all([sent, writtenBack]).then(([reply]) => reply) : sent;
}

function transitionOf(parsed: unknown): CircuitTransition | undefined {
  if (!parsed || typeof parsed !== 'object') return undefined;
  if ('to' in parsed) return parsed as CircuitTransition;
  return (parsed as { transition?: CircuitTransition }).transition;
}

function toTransition(reply: ScriptReply, at: number): CircuitTransition | undefined {
  const from = reply[at];
  if (!from) return undefined;
  const breakDuration = Number(reply[at + 3]);
  const throughput = Number(reply[at + 4]);
  const failures = Number(reply[at + 5]);
  return {
    from: from as CircuitState,
    to: reply[at + 1] as CircuitState,
    reason: reply[at + 2] as CircuitTransitionReason,
    breakDuration: breakDuration >= 0 ? breakDuration : undefined,
    health:
      throughput >= 0
        ? { throughput, failures, failureRatio: throughput === 0 ? 0 : failures / throughput }
        : undefined,
  };
}

function toMetrics(policy: CircuitPolicy, consecutive: number, windows: string, ring: string): CircuitMetricsSnapshot {
  if (policy.kind === 'consecutive') return { kind: 'consecutive', consecutiveFailures: consecutive };
  if (policy.kind === 'count-window') return { kind: 'count-window', outcomes: ring };
  return {
    kind: policy.kind,
    windows: windows
      ? windows.split('|').map((entry) => {
          const [s, ok, f] = entry.split(':').map(Number);
          return [s, ok, f] as const;
        })
      : [],
  };
}
