import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import {
  BrokenCircuitError,
  ResiliencePipelineBuilder,
  type CircuitBreakerKind,
  type CircuitState,
  type ResiliencePipeline,
} from '../../src/index.js';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';
import { waitFor } from './redis-topology.utils.js';

/*
 * Three instances (three stores, three connections) share one circuit on the real redis-server, with
 * success batching on and the local cache on or off. fast-check generates interleavings of calls in real
 * time (one shared fake clock, strictly increasing), flushes and clock moves. Every decision — ran, or
 * rejected with which retry-after (so: when it opened, when a probe was admitted) — must match the
 * single-process model fed the outcomes in real-time order, where the only allowed difference is the
 * documented staleness: a batched success counts from the instance's next call to Redis (or its flush),
 * and with the cache an instance may admit a call as closed for up to `localCacheTtl` after it last saw
 * the circuit closed. A late success takes its place in time: it never erases failures that happened
 * after it, and never reorders a count window.
 */

type Kind = CircuitBreakerKind;

interface Config {
  kind: Kind;
  failureThreshold: number;
  failureRatio: number;
  minimumThroughput: number;
  windowSize: number;
  breakDuration: number;
  permittedCallsInHalfOpen: number;
  successThresholdInHalfOpen: number;
  maxHalfOpenWait: number;
}

type Step =
  | { type: 'call'; instance: number; failed: boolean; slow: boolean; gap: number }
  | { type: 'flush'; instance: number }
  | { type: 'wait'; ms: number };

const SAMPLING = 600_000; // nothing leaves a time window within a scenario
const SLOW = 20;
const CACHE_TTL = 40;

interface Permit {
  gen: number;
  probe: boolean;
}

/** The single-process circuit, fed outcomes in time order, plus what each instance has not sent yet. */
class FleetModel {
  state: CircuitState = 'closed';
  gen = 0;
  blockedUntil = 0;
  lastBreak = 0;
  halfOpenSince = 0;
  issued = 0;
  succeeded = 0;
  /** Outcomes of the closed period Redis knows, in time order. */
  known: { t: number; failed: boolean }[] = [];
  pending: { gen: number; times: number[] }[] = [0, 1, 2].map(() => ({ gen: -1, times: [] }));
  cache: ({ until: number; gen: number } | undefined)[] = [undefined, undefined, undefined];

  constructor(
    readonly c: Config,
    readonly cacheTtl: number,
  ) {}

  acquire(i: number, now: number): { permit?: Permit; retryAfter?: number } {
    const cached = this.cache[i];
    if (this.cacheTtl > 0 && cached && now < cached.until) return { permit: { gen: cached.gen, probe: false } };
    this.deliver(i);
    const decision = this.decide(now);
    this.cache[i] =
      this.cacheTtl > 0 && this.state === 'closed' ? { until: now + this.cacheTtl, gen: this.gen } : undefined;
    return decision;
  }

  record(i: number, permit: Permit, failed: boolean, now: number): void {
    if (!failed && !permit.probe) {
      const p = this.pending[i];
      if (p.gen !== permit.gen) this.pending[i] = { gen: permit.gen, times: [now] };
      else p.times.push(now);
      return;
    }
    this.cache[i] = undefined;
    this.deliver(i);
    if (permit.gen !== this.gen) return;
    if (permit.probe) {
      if (failed) this.open(now);
      else if (++this.succeeded >= this.c.successThresholdInHalfOpen) this.close();
      return;
    }
    this.insert(now, true);
    if (this.shouldBreak()) this.open(now);
  }

  /** A Redis call of instance `i`: its batched successes arrive. */
  deliver(i: number): void {
    const p = this.pending[i];
    this.pending[i] = { gen: -1, times: [] };
    if (p.gen !== this.gen || this.state !== 'closed') return;
    for (const t of p.times) this.insert(t, false);
  }

  private decide(now: number): { permit?: Permit; retryAfter?: number } {
    if (this.state === 'closed') return { permit: { gen: this.gen, probe: false } };
    if (this.state === 'open') {
      if (now < this.blockedUntil) return { retryAfter: this.blockedUntil - now };
      this.state = 'half-open';
      this.gen++;
      this.halfOpenSince = now;
      this.issued = 1;
      this.succeeded = 0;
      return { permit: { gen: this.gen, probe: true } };
    }
    if (now - this.halfOpenSince >= this.c.maxHalfOpenWait) {
      this.open(now);
      return { retryAfter: this.blockedUntil - now };
    }
    if (this.issued < this.c.permittedCallsInHalfOpen) {
      this.issued++;
      return { permit: { gen: this.gen, probe: true } };
    }
    return { retryAfter: Math.max(1, this.lastBreak) };
  }

  /** In time order (an equal time goes after: arrival order). */
  private insert(t: number, failed: boolean): void {
    let at = this.known.length;
    while (at > 0 && this.known[at - 1].t > t) at--;
    this.known.splice(at, 0, { t, failed });
  }

  private window(): { t: number; failed: boolean }[] {
    return this.c.kind === 'count-window' ? this.known.slice(-this.c.windowSize) : this.known;
  }

  consecutiveFailures(): number {
    let n = 0;
    for (let i = this.known.length - 1; i >= 0 && this.known[i].failed; i--) n++;
    return n;
  }

  private shouldBreak(): boolean {
    if (this.c.kind === 'consecutive') return this.consecutiveFailures() >= this.c.failureThreshold;
    const window = this.window();
    const failures = window.filter((o) => o.failed).length;
    return window.length >= this.c.minimumThroughput && failures / window.length >= this.c.failureRatio;
  }

  private open(now: number): void {
    this.state = 'open';
    this.gen++;
    this.blockedUntil = now + this.c.breakDuration;
    this.lastBreak = this.c.breakDuration;
    this.issued = 0;
    this.succeeded = 0;
  }

  private close(): void {
    this.known = [];
    this.issued = 0;
    this.succeeded = 0;
    this.state = 'closed';
    this.gen++;
  }

  /** What the circuit's measurements should be once everything is sent. */
  metrics(): { total: number; failures: number; consecutive: number; outcomes: string } {
    const window = this.window();
    return {
      total: window.length,
      failures: window.filter((o) => o.failed).length,
      consecutive: Math.min(this.consecutiveFailures(), this.c.failureThreshold),
      outcomes: window.map((o) => (o.failed ? '1' : '0')).join(''),
    };
  }
}

const configArb = (kind: Kind): fc.Arbitrary<Config> =>
  fc
    .record({
      failureThreshold: fc.integer({ min: 1, max: 4 }),
      failureRatio: fc.constantFrom(0.34, 0.5, 0.75, 1),
      minimumThroughput: fc.integer({ min: 1, max: 5 }),
      windowSize: fc.integer({ min: 2, max: 6 }),
      breakDuration: fc.constantFrom(50, 200),
      permittedCallsInHalfOpen: fc.integer({ min: 1, max: 2 }),
      successFraction: fc.double({ min: 0, max: 1, noNaN: true }),
      maxHalfOpenWait: fc.constant(300),
    })
    .map(({ successFraction, ...c }) => ({
      ...c,
      minimumThroughput: kind === 'count-window' ? Math.min(c.minimumThroughput, c.windowSize) : c.minimumThroughput,
      kind,
      successThresholdInHalfOpen: Math.max(1, Math.ceil(successFraction * c.permittedCallsInHalfOpen)),
    }));

const stepArb = (kind: Kind): fc.Arbitrary<Step> =>
  fc.oneof(
    {
      weight: 10,
      arbitrary: fc.record({
        type: fc.constant('call' as const),
        instance: fc.integer({ min: 0, max: 2 }),
        failed: fc.boolean(),
        slow: kind === 'slow-call' ? fc.boolean() : fc.constant(false),
        gap: fc.constantFrom(1, 3, 10, 25),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ type: fc.constant('flush' as const), instance: fc.integer({ min: 0, max: 2 }) }),
    },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('wait' as const), ms: fc.constantFrom(50, 200, 300) }) },
  );

describe('a fleet of three stores on one Redis behaves as one breaker (property, real redis-server)', () => {
  const clients: Redis[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) clients.push(redisClient());
    await Promise.all(clients.map(ready));
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
  });

  async function runFleet(config: Config, steps: Step[], cacheTtl: number, circuitKey: string): Promise<void> {
    const time = new FakeTimeProvider(1_700_000_000_000);
    const keyPrefix = uniquePrefix('fleet-property');
    const stores = clients.map(
      (client) =>
        new RedisCircuitBreakerStateStore({
          client,
          keyPrefix,
          timeProvider: time,
          localCacheTtl: cacheTtl,
          // Flushes happen where the scenario says (the timer would fire them after this long).
          flushInterval: 2_000_000_000,
          operationTimeout: 5_000,
        }),
    );
    const { kind, failureThreshold, failureRatio, minimumThroughput, windowSize, ...common } = config;
    const kindOptions =
      kind === 'consecutive'
        ? { failureThreshold }
        : kind === 'count-window'
          ? { failureRatio, minimumThroughput, windowSize }
          : kind === 'slow-call'
            ? { failureRatio, minimumThroughput, samplingDuration: SAMPLING, slowCallDuration: SLOW }
            : { failureRatio, minimumThroughput, samplingDuration: SAMPLING };
    const options = { kind, ...kindOptions, ...common };
    const pipelines: ResiliencePipeline[] = stores.map((stateStore) =>
      new ResiliencePipelineBuilder({ timeProvider: time })
        .addCircuitBreaker({ ...options, stateStore, circuitKey })
        .build(),
    );
    const model = new FleetModel(config, cacheTtl);
    const failure = new Error('dependency failed');

    for (const [index, step] of steps.entries()) {
      const where = `step ${index} ${JSON.stringify(step)}`;
      if (step.type === 'wait') {
        time.advance(step.ms);
      } else if (step.type === 'flush') {
        model.deliver(step.instance);
        await stores[step.instance].flush();
      } else {
        time.advance(step.gap);
        const expected = model.acquire(step.instance, time.now());
        const actual = await pipelines[step.instance]
          .execute(() => {
            if (step.slow) time.advance(SLOW);
            if (step.failed) throw failure;
            return 'ok';
          })
          .then(
            () => 'ran',
            (e: unknown) => (e instanceof BrokenCircuitError ? `broken:${e.retryAfter}` : 'ran'),
          );
        expect(`${where}: ${actual}`).toBe(`${where}: ${expected.permit ? 'ran' : `broken:${expected.retryAfter}`}`);
        if (expected.permit) model.record(step.instance, expected.permit, step.failed || step.slow, time.now());
      }
    }

    // Everything sent: Redis holds exactly the single-process measurements, in time order.
    for (let i = 0; i < 3; i++) model.deliver(i);
    await Promise.all(stores.map((s) => s.flush()));
    const snapshot = await stores[0].exportSnapshot(circuitKey, toCircuitPolicy(options));
    expect(snapshot.state).toBe(model.state);
    if (model.state === 'closed') {
      const m = model.metrics();
      if (snapshot.metrics.kind === 'consecutive') expect(snapshot.metrics.consecutiveFailures).toBe(m.consecutive);
      else if (snapshot.metrics.kind === 'count-window') expect(snapshot.metrics.outcomes).toBe(m.outcomes);
      else {
        const windows = snapshot.metrics.windows;
        expect([windows.reduce((n, w) => n + w[1] + w[2], 0), windows.reduce((n, w) => n + w[2], 0)]).toEqual([
          m.total,
          m.failures,
        ]);
      }
    }
  }

  for (const kind of ['consecutive', 'count-window', 'time-window', 'slow-call'] as const) {
    for (const cacheTtl of [0, CACHE_TTL]) {
      it(`${kind} breaker, local cache ${cacheTtl ? 'on' : 'off'}: decisions match the single-process model`, async () => {
        let run = 0;
        await fc.assert(
          fc.asyncProperty(configArb(kind), fc.array(stepArb(kind), { minLength: 4, maxLength: 40 }), (config, steps) =>
            runFleet(config, steps, cacheTtl, `${kind}-${cacheTtl}-${++run}`),
          ),
          { numRuns: 30 },
        );
      });
    }
  }

  it('a time window takes a late success at its own time: into its own bucket, out with it, and not at all once older than the window', async () => {
    const time = new FakeTimeProvider(1_700_000_000_000);
    const keyPrefix = uniquePrefix('late-window');
    const [a, b] = clients.map(
      (client) =>
        new RedisCircuitBreakerStateStore({
          client,
          keyPrefix,
          timeProvider: time,
          flushInterval: 2_000_000_000,
          operationTimeout: 5_000,
        }),
    );
    const policy = toCircuitPolicy({ kind: 'time-window', samplingDuration: 1_000, minimumThroughput: 100 });
    const t0 = time.now();
    const total = async () => {
      const snapshot = await b.exportSnapshot('k', policy);
      const windows = snapshot.metrics.kind === 'time-window' ? snapshot.metrics.windows : [];
      return [windows.reduce((n, w) => n + w[1], 0), windows.reduce((n, w) => n + w[2], 0)];
    };
    // A success on instance a at t0 + 100, sent only at t0 + 600, after b's failure at t0 + 500.
    time.advance(100);
    const first = await a.acquire('k', policy, time.now());
    expect(a.record('k', policy, first.permit!, 'success', time.now())).toBeUndefined(); // batched
    time.advance(400);
    const other = await b.acquire('k', policy, time.now());
    await b.record('k', policy, other.permit!, 'failure', time.now());
    time.advance(100);
    await a.flush();
    expect(await total()).toEqual([1, 1]);
    // At t0 + 1150 the success (t0 + 100) has left the window; the failure (t0 + 500) has not.
    time.advance(550);
    expect(await total()).toEqual([0, 1]);
    // A success sent when it is already older than the window never enters it.
    const late = await a.acquire('k', policy, time.now());
    expect(a.record('k', policy, late.permit!, 'success', time.now())).toBeUndefined();
    time.advance(1_000);
    await a.flush();
    expect(await total()).toEqual([0, 0]);
    expect(time.now() - t0).toBe(2_150);
  });

  it('sends a batched success at the latest flushInterval after it happened, on the store clock', async () => {
    const time = new FakeTimeProvider(1_700_000_000_000);
    const keyPrefix = uniquePrefix('flush-timer');
    const a = new RedisCircuitBreakerStateStore({
      client: clients[0],
      keyPrefix,
      timeProvider: time,
      flushInterval: 100,
      operationTimeout: 5_000,
    });
    const b = new RedisCircuitBreakerStateStore({
      client: clients[1],
      keyPrefix,
      timeProvider: time,
      operationTimeout: 5_000,
    });
    const policy = toCircuitPolicy({ kind: 'count-window', windowSize: 10, minimumThroughput: 10 });
    const { permit } = await a.acquire('k', policy, time.now());
    expect(a.record('k', policy, permit!, 'success', time.now())).toBeUndefined();
    const outcomes = async () => {
      const m = (await b.exportSnapshot('k', policy)).metrics;
      return m.kind === 'count-window' ? m.outcomes : '';
    };
    time.advance(99);
    expect(await outcomes()).toBe('');
    time.advance(1); // the flush timer fires on the store's clock
    await waitFor('the flushed success', async () => (await outcomes()) === '0');
  });

  it('orders outcomes of instances whose clocks disagree correctly when they are further apart than the skew', async () => {
    const run = async (skew: number) => {
      const real = new FakeTimeProvider(1_700_000_000_000);
      const keyPrefix = uniquePrefix('skew');
      const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 2, breakDuration: 10_000 });
      const a = new RedisCircuitBreakerStateStore({
        client: clients[0],
        keyPrefix,
        flushInterval: 2_000_000_000,
        operationTimeout: 5_000,
      });
      const b = new RedisCircuitBreakerStateStore({ client: clients[1], keyPrefix, operationTimeout: 5_000 });
      const aNow = () => real.now() - skew; // a's clock is behind
      // Real order: failure (b), 30 ms later a success (a), 30 ms later a failure (b): one failure in a row.
      let p = await b.acquire('k', policy, real.now());
      await b.record('k', policy, p.permit!, 'failure', real.now());
      real.advance(30);
      p = await a.acquire('k', policy, aNow());
      expect(a.record('k', policy, p.permit!, 'success', aNow())).toBeUndefined();
      real.advance(30);
      await a.flush(); // the success arrives after the next failure would be decided otherwise
      p = await b.acquire('k', policy, real.now());
      return (await b.record('k', policy, p.permit!, 'failure', real.now()))?.to ?? 'closed';
    };
    expect(await run(20)).toBe('closed'); // skew < the 30 ms gap: the success still ends the run
    expect(await run(40)).toBe('open'); // skew > the gap: the success looks older than the first failure
  });

  it('three successes then four failures in a row, across three instances, open a threshold-4 circuit at the fourth failure', async () => {
    const config: Config = {
      kind: 'consecutive',
      failureThreshold: 4,
      failureRatio: 1,
      minimumThroughput: 1,
      windowSize: 2,
      breakDuration: 30_000,
      permittedCallsInHalfOpen: 1,
      successThresholdInHalfOpen: 1,
      maxHalfOpenWait: 300,
    };
    const steps: Step[] = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => ({
      type: 'call',
      instance: i % 3,
      failed: i >= 3,
      slow: false,
      gap: 1,
    }));
    // The eighth call is rejected (broken, the full break ahead): the dependency saw exactly 3 + 4 calls.
    await runFleet(config, steps, 0, uniquePrefix('issue-example'));
  });
});
