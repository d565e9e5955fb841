import type { Cluster, Redis } from 'ioredis';
import {
  failFastOnRefusal,
  nodeOf,
  RedisAvailability,
  servesSlots,
  WHOLE,
  type StoreLogger,
} from './redis-availability.js';
import { DEFAULT_OPERATION_TIMEOUT, resolveKeyPrefix, withTimeout } from './redis.util.js';
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
  /**
   * Namespaces the keys (one per application). Default: the `name` of the package.json in the working
   * directory; without one, required.
   */
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

/**
 * What the script answers: the transition it made (from, to, reason, break, health throughput and
 * failures; `null` where there is none) and the circuit's halfOpenAttempts, then its state and generation,
 * then the op's own values. `export` answers the circuit's fields instead.
 */
type ScriptReply = (string | number | null)[];

/** Positions in a script's reply. */
const HALF_OPEN_ATTEMPTS = 6;
const STATE = 7;
const GENERATION = 8;

/** A permit handed out by the local fallback during an outage. */
interface LocalPermit extends CircuitPermit {
  readonly origin: 'local';
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
  /**
   * The write-back of local openings in progress after an outage of a node, shared by every call to that
   * node meanwhile.
   */
  private readonly recovering = new Map<string, Promise<void>>();

  constructor(private readonly options: RedisCircuitBreakerStateStoreOptions) {
    this.client = options.client;
    this.prefix = resolveKeyPrefix(options.keyPrefix);
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
      client: options.client,
    });
    if (typeof (this.client as { nestResilienceCircuit?: unknown }).nestResilienceCircuit !== 'function') {
      this.client.defineCommand('nestResilienceCircuit', { numberOfKeys: 1, lua: CIRCUIT_SCRIPT });
    }
  }

  /**
   * True while Redis is considered unreachable — on a Redis Cluster, while any primary is (the circuits on
   * the other primaries keep using Redis meanwhile).
   */
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
    const cached = this.closedUntil.get(key); // only ever filled with a localCacheTtl
    if (cached && now < cached.until)
      return { state: 'closed', permit: { generation: cached.generation, probe: false } };
    return this.run(
      key,
      policy,
      now,
      'acquire',
      (reply, transition) => {
        const [state, generation, admitted, probe, retryAfter, verdictDueAt] = reply.slice(STATE) as [
          CircuitState,
          number,
          number,
          number,
          number | null,
          number | null,
        ];
        if (state === 'closed' && this.cacheTtl > 0)
          this.closedUntil.set(key, { until: now + this.cacheTtl, generation });
        else this.closedUntil.delete(key);
        return {
          state,
          permit: admitted === 1 ? { generation, probe: probe === 1 } : undefined,
          // An opening (a half-open wait ran out) refuses for its break, a generated one included.
          retryAfter: transition?.breakDuration ?? retryAfter ?? undefined,
          verdictDueAt: verdictDueAt ?? undefined,
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
    if ((permit as LocalPermit).origin === 'local') return this.local.record(key, policy, permit, result, now);
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
      (_, transition) => transition,
      () => undefined,
      permit.generation,
      Number(permit.probe),
      result,
    );
  }

  isolate(key: string, policy: CircuitPolicy, now: number): Promise<CircuitTransition | undefined> {
    return this.manual('isolate', key, policy, now, () => this.local.isolate(key, policy, now));
  }

  close(key: string, policy: CircuitPolicy, now: number): Promise<CircuitTransition | undefined> {
    return this.manual('close', key, policy, now, () => this.local.close(key, policy, now));
  }

  async exportSnapshot(key: string, policy: CircuitPolicy): Promise<CircuitSnapshot> {
    const reply = await this.call(key, policy, this.time.now(), 'export');
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
      metrics: toMetrics(policy, Number(cf), String(w), String(ring)),
    };
  }

  async importSnapshot(key: string, policy: CircuitPolicy, snapshot: CircuitSnapshot): Promise<void> {
    await this.writeSnapshot(key, policy, snapshot, 'import');
  }

  /** `import` replaces the circuit; `writeBack` (after an outage) keeps an isolation made meanwhile. */
  private async writeSnapshot(
    key: string,
    policy: CircuitPolicy,
    snapshot: CircuitSnapshot,
    op: 'import' | 'writeBack',
  ): Promise<void> {
    this.closedUntil.delete(key);
    const m = snapshot.metrics;
    const payload =
      m.kind === 'consecutive'
        ? String(m.consecutiveFailures)
        : m.kind === 'count-window'
          ? m.outcomes
          : m.windows.map(([s, ok, f]) => `${s}:${ok}:${f}`).join('|');
    await this.call(
      key,
      policy,
      this.time.now(),
      op,
      snapshot.state,
      snapshot.generation,
      snapshot.blockedUntil,
      snapshot.lastBreakDuration,
      snapshot.halfOpenSince,
      snapshot.halfOpenAttempts,
      snapshot.lastTransitionAt,
      payload,
    );
  }

  /** Sends the successes still waiting, and stops the flush timer. Call before closing the client. */
  async flush(): Promise<void> {
    const batches = this.pending.takeAll();
    if (batches.length === 0) return;
    const now = this.time.now();
    await Promise.all(
      batches.map(({ key, policy, payload }) => {
        const node = this.nodeOf(key);
        // Its node is away: these successes would only lower failure ratios late.
        if (this.availability.skip(node)) return Promise.resolve();
        const writtenBack = this.writeBackIfRecovering(node);
        return afterWriteBack(this.send(key, policy, now, 'export', payload), writtenBack).then(
          () => this.answered(node),
          (error: unknown) => this.failed(error, node),
        );
      }),
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
    return Promise.resolve(this.run(key, policy, now, op, (_, transition) => transition, local));
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
    parse: (reply: ScriptReply, transition: CircuitTransition | undefined) => R,
    fallback: () => R,
    ...args: (string | number)[]
  ): R | Promise<R> {
    const node = this.nodeOf(key);
    if (this.availability.skip(node)) return fallback();
    const writtenBack = this.writeBackIfRecovering(node);
    const pending = this.pending.take(key);
    return afterWriteBack(this.send(key, policy, now, op, pending, ...args), writtenBack).then(
      async (reply): Promise<R> => {
        this.answered(node);
        const transition = toTransition(reply);
        if (transition?.to === 'open' && policy.breakDurationGenerator) {
          await this.applyGeneratedBreak(key, policy, reply, transition);
        }
        return parse(reply, transition);
      },
      (error: unknown) => {
        this.failed(error, node);
        return fallback();
      },
    );
  }

  /** The node (cluster primary) that serves a circuit; the whole Redis otherwise. */
  private nodeOf(key: string): string {
    return nodeOf(this.client, this.keyFor(key));
  }

  private answered(node: string): void {
    if (!this.availability.isDegraded && this.touchedLocally.size === 0) return;
    this.availability.answered(node);
    // The node answers: the circuits kept here during its outage (if any) follow it again.
    this.dropLocal(node);
    // A primary replaced in a cluster failover serves no slot any more: its circuits live on its successor.
    // (Its circuits kept here are written back to the successor by their next call.)
    for (const down of [...this.availability.downNodes]) {
      if (!servesSlots(this.client, down)) this.availability.answered(down);
    }
  }

  private dropLocal(node: string): void {
    for (const key of [...this.touchedLocally.keys()]) {
      if (this.nodeOf(key) === node) {
        this.local.delete(key);
        this.touchedLocally.delete(key);
      }
    }
  }

  private failed(error: unknown, node: string): void {
    const down = this.availability.failed(error, node);
    // What was seen closed may no longer be: the cache is not trusted across a failure of its node.
    for (const key of [...this.closedUntil.keys()]) {
      if (down === WHOLE || this.nodeOf(key) === down) this.closedUntil.delete(key);
    }
  }

  /** The script opened with the fixed break; a generator's break replaces it (same generation only). */
  private async applyGeneratedBreak(
    key: string,
    policy: CircuitPolicy,
    reply: ScriptReply,
    t: CircuitTransition,
  ): Promise<void> {
    // An opening always carries the health that tripped it.
    const { failures, failureRatio } = t.health!;
    const generated = policy.breakDurationGenerator!({
      failureCount: failures,
      failureRatio,
      halfOpenAttempts: reply[HALF_OPEN_ATTEMPTS] as number,
    });
    if (typeof generated !== 'number' || !(generated >= 0)) return;
    const duration = Math.min(generated, MAX_TIMER_DELAY);
    (t as { breakDuration?: number }).breakDuration = duration;
    const generation = reply[GENERATION] as number;
    await this.send(key, policy, this.time.now(), 'setBreak', undefined, generation, Math.round(duration)).catch(
      () => undefined,
    );
  }

  private call(
    key: string,
    policy: CircuitPolicy,
    now: number,
    op: string,
    ...args: (string | number)[]
  ): Promise<ScriptReply> {
    return this.send(key, policy, now, op, this.pending.take(key), ...args);
  }

  /** One script call, raced against the operation timeout (and a refusal of its cluster node). */
  private send(
    key: string,
    policy: CircuitPolicy,
    now: number,
    op: string,
    pending: SuccessPayload | undefined,
    ...args: (string | number)[]
  ): Promise<ScriptReply> {
    // Twice the sampling duration counts for the kinds with a time window only; the others carry the
    // default 30 s, which the minute covers.
    const ttl = Math.max(60_000, 2 * policy.samplingDuration, 2 * policy.breakDuration + policy.maxHalfOpenWait);
    // Stryker disable next-line ObjectLiteral,UnaryOperator,StringLiteral: equivalent — without waiting successes the script reads neither value: it applies groups only of a matching generation, and -1 matches none
    const { generation, groups } = pending ?? { generation: -1, groups: '' };
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
      generation,
      groups,
      ...args,
    );
    return withTimeout(failFastOnRefusal(this.client, this.nodeOf(key), command), this.operationTimeout);
  }

  private localAcquire(key: string, policy: CircuitPolicy, now: number): CircuitAcquireResult {
    switch (this.outageMode) {
      case 'allow': {
        // Stryker disable next-line ObjectLiteral,UnaryOperator,BooleanLiteral,StringLiteral: equivalent — an inert permit: its generation (-1) matches no circuit, here or in Redis, so whatever it says, its outcome is dropped (the caller's outcome stands either way)
        const permit: LocalPermit = { generation: -1, probe: false, origin: 'local' };
        return { state: 'closed', permit };
      }
      case 'reject':
        return { state: 'open', retryAfter: this.availability.retryAfter(now, this.nodeOf(key)) };
      case 'local': {
        this.touchedLocally.set(key, policy);
        const decision = this.local.acquire(key, policy, now);
        return decision.permit
          ? { ...decision, permit: { ...decision.permit, origin: 'local' } as LocalPermit }
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
  private writeBackIfRecovering(node: string): Promise<void> | undefined {
    // Nothing kept here (the local circuits are dropped whenever their node answers): nothing to send.
    if (this.touchedLocally.size === 0) return undefined;
    let recovering = this.recovering.get(node);
    if (!recovering) {
      recovering = this.writeBackOpenings(node).finally(() => this.recovering.delete(node));
      this.recovering.set(node, recovering);
    }
    return recovering;
  }

  private async writeBackOpenings(node: string): Promise<void> {
    await Promise.all(
      [...this.touchedLocally].map(([key, policy]) => {
        if (this.nodeOf(key) !== node) return Promise.resolve();
        const snapshot = this.local.exportSnapshot(key, policy);
        const opened = snapshot.state === 'open' || snapshot.state === 'isolated';
        return opened ? this.writeSnapshot(key, policy, snapshot, 'writeBack') : Promise.resolve();
      }),
    );
  }
}

/** The reply of a script call sent after a write-back, once both are answered (either failure fails it). */
function afterWriteBack(sent: Promise<ScriptReply>, writtenBack: Promise<void> | undefined): Promise<ScriptReply> {
  return writtenBack ? Promise.all([sent, writtenBack]).then(([reply]) => reply) : sent;
}

function toTransition(reply: ScriptReply): CircuitTransition | undefined {
  const [from, to, reason, breakDuration, throughput, failures] = reply as [
    CircuitState | null,
    CircuitState,
    CircuitTransitionReason,
    number | null,
    number | null,
    number,
  ];
  if (from === null) return undefined;
  return {
    from,
    to,
    reason,
    breakDuration: breakDuration ?? undefined,
    health:
      throughput === null
        ? undefined
        : { throughput, failures, failureRatio: throughput === 0 ? 0 : failures / throughput },
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
