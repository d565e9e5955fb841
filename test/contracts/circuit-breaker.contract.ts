import { expect } from '@jest/globals';
import fc from 'fast-check';
import {
  CircuitBreakerManualControl,
  CircuitBreakerStateProvider,
  isBrokenCircuitError,
  isIsolatedCircuitError,
  ResiliencePipelineBuilder,
  type CircuitBreakerKind,
  type CircuitBreakerStateStore,
  type CircuitState,
} from '../../src/core.entry.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

/*
 * The circuit-breaker contract, model-based: random sequences of calls (sequential and overlapping), outcomes, clock moves and
 * manual isolate/close run against the real breaker (strategy + in-memory store) and against a small
 * reference model written from the specification. After every step both must agree on whether the call
 * ran, how it was rejected (with which retryAfter) and the circuit's state.
 */

export type Result = 'success' | 'failure' | 'cancel';

export type Command =
  | { type: 'call'; result: Result; duration: number }
  | { type: 'start' }
  | { type: 'finish'; index: number; result: Result }
  | { type: 'advance'; ms: number }
  | { type: 'isolate' }
  | { type: 'close' };

export interface Config {
  kind: CircuitBreakerKind;
  failureThreshold: number;
  failureRatio: number;
  minimumThroughput: number;
  samplingDuration: number;
  windowSize: number;
  slowCallDuration: number;
  breakDuration: number;
  permittedCallsInHalfOpen: number;
  successThresholdInHalfOpen: number;
  maxHalfOpenWait: number;
}

interface Permit {
  gen: number;
  probe: boolean;
  startedAt: number;
}

type Admission = { admitted: true; permit: Permit } | { admitted: false; isolated: boolean; retryAfter?: number };

/** The reference model: the specification, written as plainly as possible. */
class Model {
  state: CircuitState = 'closed';
  gen = 0;
  blockedUntil = 0;
  lastBreak = 0;
  halfOpenSince = 0;
  issued = 0;
  succeeded = 0;
  consecutive = 0;
  recent: boolean[] = [];
  buckets: { start: number; s: number; f: number }[] = [];

  constructor(readonly c: Config) {}

  acquire(now: number): Admission {
    if (this.state === 'closed') return { admitted: true, permit: { gen: this.gen, probe: false, startedAt: now } };
    if (this.state === 'isolated') return { admitted: false, isolated: true };
    if (this.state === 'open') {
      if (now < this.blockedUntil) return { admitted: false, isolated: false, retryAfter: this.blockedUntil - now };
      this.state = 'half-open';
      this.gen++;
      this.halfOpenSince = now;
      this.issued = 1;
      this.succeeded = 0;
      return { admitted: true, permit: { gen: this.gen, probe: true, startedAt: now } };
    }
    if (now - this.halfOpenSince >= this.c.maxHalfOpenWait) {
      this.open(now);
      return { admitted: false, isolated: false, retryAfter: this.blockedUntil - now };
    }
    // At most permittedCallsInHalfOpen probes in flight; no more issued than the threshold needs.
    const inFlight = this.issued - this.succeeded;
    const needed = Math.max(this.c.permittedCallsInHalfOpen, this.c.successThresholdInHalfOpen);
    if (inFlight < this.c.permittedCallsInHalfOpen && this.issued < needed) {
      this.issued++;
      return { admitted: true, permit: { gen: this.gen, probe: true, startedAt: now } };
    }
    return { admitted: false, isolated: false, retryAfter: Math.max(1, this.lastBreak) };
  }

  record(permit: Permit, result: Result, now: number): void {
    if (permit.gen !== this.gen) return;
    const slow = this.c.kind === 'slow-call' && now - permit.startedAt >= this.c.slowCallDuration;
    const verdict = result === 'cancel' ? 'ignored' : result === 'failure' || slow ? 'failure' : 'success';
    if (permit.probe) {
      if (verdict === 'ignored') this.issued--;
      else if (verdict === 'failure') this.open(now);
      else if (++this.succeeded >= this.c.successThresholdInHalfOpen) this.closeCircuit();
      return;
    }
    if (verdict === 'ignored') return;
    this.measure(verdict === 'failure', now);
    if (verdict === 'failure' && this.shouldBreak(now)) this.open(now);
  }

  isolate(): void {
    if (this.state !== 'isolated') {
      this.state = 'isolated';
      this.gen++;
    }
  }

  closeCircuit(): void {
    this.consecutive = 0;
    this.recent = [];
    this.buckets = [];
    this.issued = 0;
    this.succeeded = 0;
    if (this.state !== 'closed') {
      this.state = 'closed';
      this.gen++;
    }
  }

  private open(now: number): void {
    this.state = 'open';
    this.gen++;
    this.blockedUntil = now + this.c.breakDuration;
    this.lastBreak = this.c.breakDuration;
    this.issued = 0;
    this.succeeded = 0;
  }

  private measure(failed: boolean, now: number): void {
    if (this.c.kind === 'consecutive') {
      this.consecutive = failed ? this.consecutive + 1 : 0;
    } else if (this.c.kind === 'count-window') {
      this.recent.push(failed);
      if (this.recent.length > this.c.windowSize) this.recent.shift();
    } else {
      const bucket = this.bucket(now);
      if (failed) bucket.f++;
      else bucket.s++;
    }
  }

  private bucket(now: number) {
    const last = this.buckets.at(-1);
    const current = last && now - last.start < this.c.samplingDuration / 10 ? last : { start: now, s: 0, f: 0 };
    if (current !== last) this.buckets.push(current);
    this.buckets = this.buckets.filter((b) => now - b.start < this.c.samplingDuration);
    return current;
  }

  private shouldBreak(now: number): boolean {
    if (this.c.kind === 'consecutive') return this.consecutive >= this.c.failureThreshold;
    let total: number;
    let failures: number;
    if (this.c.kind === 'count-window') {
      total = this.recent.length;
      failures = this.recent.filter(Boolean).length;
    } else {
      this.bucket(now);
      total = this.buckets.reduce((n, b) => n + b.s + b.f, 0);
      failures = this.buckets.reduce((n, b) => n + b.f, 0);
    }
    return total >= this.c.minimumThroughput && failures / total >= this.c.failureRatio;
  }
}

export const configArb = (kind: CircuitBreakerKind): fc.Arbitrary<Config> =>
  fc
    .record({
      failureThreshold: fc.integer({ min: 1, max: 4 }),
      failureRatio: fc.constantFrom(0.25, 0.5, 1),
      minimumThroughput: fc.integer({ min: 1, max: 4 }),
      samplingDuration: fc.constantFrom(100, 1_000),
      windowSize: fc.integer({ min: 4, max: 6 }),
      slowCallDuration: fc.constantFrom(20, 50),
      breakDuration: fc.constantFrom(50, 200),
      permittedCallsInHalfOpen: fc.integer({ min: 1, max: 3 }),
      // Up to three times the probe count: thresholds above permittedCallsInHalfOpen are allowed.
      successFraction: fc.double({ min: 0, max: 3, noNaN: true }),
      maxHalfOpenWait: fc.constantFrom(100, 300),
    })
    .map(({ successFraction, ...c }) => ({
      ...c,
      kind,
      successThresholdInHalfOpen: Math.max(1, Math.ceil(successFraction * c.permittedCallsInHalfOpen)),
    }));

const resultArb = fc.constantFrom<Result>('success', 'failure', 'failure', 'cancel');
export const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('call' as const),
      result: resultArb,
      duration: fc.constantFrom(0, 10, 60),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('start' as const) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('finish' as const), index: fc.nat(5), result: resultArb }) },
  {
    weight: 3,
    arbitrary: fc.record({ type: fc.constant('advance' as const), ms: fc.constantFrom(1, 10, 49, 50, 100, 250) }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('isolate' as const) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('close' as const) }) },
);

interface Held {
  real: { settle: (result: Result) => void; done: Promise<string> };
  model: Admission & { admitted: true };
}

function describeAdmission(a: Admission): string {
  return a.admitted ? 'ran' : a.isolated ? 'isolated' : `broken:${a.retryAfter}`;
}

function describeRejection(error: unknown): string {
  if (isIsolatedCircuitError(error)) return 'isolated';
  if (isBrokenCircuitError(error)) return `broken:${error.retryAfter}`;
  return 'ran';
}

/**
 * Runs one scenario against a breaker on `store` (a fresh circuit key each time) and the model.
 * The store may answer synchronously or asynchronously.
 */
export async function runScenario(
  config: Config,
  commands: Command[],
  createStore?: (time: FakeTimeProvider) => CircuitBreakerStateStore,
  circuitKey?: string,
): Promise<void> {
  const time = new FakeTimeProvider(1_000_000);
  const store = createStore?.(time);
  const control = new CircuitBreakerManualControl();
  const provider = new CircuitBreakerStateProvider();
  const {
    kind,
    failureThreshold,
    failureRatio,
    minimumThroughput,
    samplingDuration,
    windowSize,
    slowCallDuration,
    ...common
  } = config;
  const kindOptions =
    kind === 'consecutive'
      ? { failureThreshold }
      : kind === 'count-window'
        ? { failureRatio, minimumThroughput, windowSize }
        : kind === 'slow-call'
          ? { failureRatio, minimumThroughput, samplingDuration, slowCallDuration }
          : { failureRatio, minimumThroughput, samplingDuration };
  const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
    .addCircuitBreaker({
      kind,
      ...kindOptions,
      ...common,
      manualControl: control,
      stateProvider: provider,
      stateStore: store,
      circuitKey,
    })
    .build();
  const model = new Model(config);
  const held: Held[] = [];
  const failure = new Error('dependency failed');
  const outcome = (result: Result) => {
    if (result === 'success') return 'ok';
    throw result === 'failure' ? failure : new DOMException('cancelled', 'AbortError');
  };

  for (const [step, command] of commands.entries()) {
    const where = `step ${step} ${JSON.stringify(command)}`;
    switch (command.type) {
      case 'call': {
        let ran = false;
        const expected = model.acquire(time.now());
        const actual = await pipeline
          .execute(() => {
            ran = true;
            time.advance(command.duration);
            return outcome(command.result);
          })
          .then(
            () => 'ran',
            (e: unknown) => describeRejection(e),
          );
        if (expected.admitted) model.record(expected.permit, command.result, time.now());
        expect(`${where}: ${ran ? 'ran' : actual}`).toBe(`${where}: ${describeAdmission(expected)}`);
        break;
      }
      case 'start': {
        const expected = model.acquire(time.now());
        let settle!: (result: Result) => void;
        let ran = false;
        let markStarted!: () => void;
        const started = new Promise<string>((resolve) => (markStarted = () => resolve('ran')));
        const done = pipeline
          .execute(() => {
            ran = true;
            markStarted();
            return new Promise<string>((resolve, reject) => {
              settle = (r) => {
                try {
                  resolve(outcome(r));
                } catch (e) {
                  reject(e);
                }
              };
            });
          })
          .then(
            () => 'ran',
            (e: unknown) => describeRejection(e),
          );
        const first = await Promise.race([started, done]);
        expect(`${where}: ${ran ? 'ran' : first}`).toBe(`${where}: ${describeAdmission(expected)}`);
        if (expected.admitted) held.push({ real: { settle, done }, model: expected });
        break;
      }
      case 'finish': {
        if (held.length === 0) break;
        const [call] = held.splice(command.index % held.length, 1);
        call.real.settle(command.result);
        await call.real.done;
        model.record(call.model.permit, command.result, time.now());
        break;
      }
      case 'advance':
        time.advance(command.ms);
        break;
      case 'isolate':
        await control.isolate();
        model.isolate();
        break;
      case 'close':
        await control.close();
        model.closeCircuit();
        break;
    }
    const snapshot = await provider.exportSnapshot();
    expect(`${where}: ${snapshot.state}`).toBe(`${where}: ${model.state}`);
  }
}
