import type { TimeProvider } from '../../src/core/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { Dependency, type DependencyListener, type DependencyOptions } from './dependency.model.js';
import { exponential, seededRandom } from '../seeded.random.js';
import { withSimulatedGlobals } from './simulated.globals.js';

/** The whole scenario: callers, instances, the dependency and its trigger. Times in simulated milliseconds. */
export interface ScenarioOptions {
  readonly seed: number;
  /** Callers, each with Poisson arrivals; caller `i` calls through instance `i mod instances`. */
  readonly callers: number;
  /** Client instances, each with its own pipeline (its own breaker, budget, limiter state). */
  readonly instances: number;
  /** Requests per second over all callers (open loop: arrivals do not wait for answers). */
  readonly offeredRate: number;
  /** A caller gives up this long after it called; a later success does not count. */
  readonly callerDeadline: number;
  /** The client's timeout of one attempt (every policy has one, as every HTTP client does). */
  readonly attemptTimeout: number;
  /** How long callers keep calling. */
  readonly duration: number;
  /** The width of one point of the timeline. */
  readonly bucket: number;
  /** The share of calls that must succeed in time, in every window after the trigger, to count as recovered. */
  readonly recoveredRatio: number;
  readonly dependency: DependencyOptions;
}

/** What every instance of a policy gets. */
export interface InstanceEnvironment {
  readonly time: TimeProvider;
  /** A seeded random source of this instance (jitter). */
  readonly random: () => number;
  readonly scenario: ScenarioOptions;
  /**
   * One attempt at the dependency. `deadline` (absolute, simulated) travels with the attempt: the
   * dependency then drops the work once it has passed or the signal has aborted.
   */
  attempt(signal: AbortSignal | undefined, deadline?: number): Promise<void>;
}

/** One call of a caller: resolves on success, rejects on failure; `deadline` is when the caller gives up. */
export type SimClient = (deadline: number) => Promise<unknown>;

/** One row of the table: how one instance's client calls the dependency. */
export interface SimPolicy {
  readonly name: string;
  /** Runs on the real clock's globals (`setTimeout`, `Date.now`): they are pointed at the simulated clock. */
  readonly usesGlobalTimers?: boolean;
  createClient(env: InstanceEnvironment): SimClient;
}

/** Per-second rates over time, one value per bucket. */
export interface Timeline {
  readonly bucket: number;
  readonly offered: number[];
  /** Attempts reaching the dependency. */
  readonly load: number[];
  /** Successes within the caller's deadline, by completion time. */
  readonly goodput: number[];
  readonly capacity: number[];
}

/** What one policy achieved in the scenario. */
export interface PolicyResult {
  readonly name: string;
  /** Successes within the caller's deadline per second, completed during the trigger. */
  readonly goodput: number;
  /** `goodput` ÷ the dependency's capacity during the trigger. */
  readonly goodputShare: number;
  /** Attempts reaching the dependency ÷ calls offered, during the trigger. */
  readonly amplification: number;
  /** p99 of calls arriving during the trigger: arrival to the client's outcome (success or failure). */
  readonly p99: number;
  /** From the end of the trigger until every later window meets `recoveredRatio`; undefined: never. */
  readonly recovery: number | undefined;
  readonly timeline: Timeline;
}

interface CallRecord {
  readonly arrival: number;
  end: number;
  good: boolean;
}

/** Counts by bucket. */
class Recorder implements DependencyListener {
  readonly offered: number[];
  readonly load: number[];
  readonly good: number[];
  readonly calls: CallRecord[] = [];

  constructor(
    private readonly bucket: number,
    buckets: number,
  ) {
    this.offered = new Array<number>(buckets).fill(0);
    this.load = new Array<number>(buckets).fill(0);
    this.good = new Array<number>(buckets).fill(0);
  }

  onArrival(now: number): void {
    this.count(this.load, now);
  }

  count(series: number[], at: number): void {
    const index = Math.floor(at / this.bucket);
    if (index < series.length) series[index]++;
  }
}

/** Runs one policy through the scenario on a fake clock and measures it. */
export async function runScenario(policy: SimPolicy, scenario: ScenarioOptions): Promise<PolicyResult> {
  const time = new FakeTimeProvider(0);
  const run = (): Promise<PolicyResult> => simulate(policy, scenario, time);
  return policy.usesGlobalTimers ? withSimulatedGlobals(time, seededRandom(scenario.seed + 7), run) : run();
}

async function simulate(policy: SimPolicy, scenario: ScenarioOptions, time: FakeTimeProvider): Promise<PolicyResult> {
  const { seed, callers, instances, offeredRate, callerDeadline, duration, bucket } = scenario;
  const { trigger } = scenario.dependency;
  const recorder = new Recorder(bucket, Math.ceil(duration / bucket));
  const dependency = new Dependency(scenario.dependency, time, seededRandom(seed + 1), recorder);
  const clients = Array.from({ length: instances }, (_, i) =>
    policy.createClient({
      time,
      random: seededRandom(seed + 100 + i),
      scenario,
      attempt: (signal, deadline) => dependency.call(signal, deadline),
    }),
  );

  const arrivals = seededRandom(seed + 2);
  const meanGap = (callers * 1_000) / offeredRate;
  const startCaller = (caller: number): void => {
    const client = clients[caller % instances];
    const next = (): void => {
      const arrival = time.now();
      if (arrival >= duration) return;
      recorder.count(recorder.offered, arrival);
      const record: CallRecord = { arrival, end: Infinity, good: false };
      recorder.calls.push(record);
      const deadline = arrival + callerDeadline;
      client(deadline).then(
        () => {
          record.end = time.now();
          record.good = record.end <= deadline;
          if (record.good) recorder.count(recorder.good, record.end);
        },
        () => {
          record.end = time.now();
        },
      );
      time.setTimeout(next, exponential(arrivals, meanGap));
    };
    time.setTimeout(next, exponential(arrivals, meanGap));
  };
  for (let caller = 0; caller < callers; caller++) startCaller(caller);
  time.setTimeout(() => dependency.wake(), trigger.start + trigger.duration);

  // Callers stop at `duration`; calls still running get one more deadline (plus retries' tail) to finish.
  await time.advanceAsync(duration + 4 * callerDeadline);
  return measure(policy.name, scenario, recorder, dependency);
}

function measure(name: string, scenario: ScenarioOptions, recorder: Recorder, dependency: Dependency): PolicyResult {
  const { bucket, duration, recoveredRatio } = scenario;
  const { trigger } = scenario.dependency;
  const first = Math.floor(trigger.start / bucket);
  const last = Math.floor((trigger.start + trigger.duration) / bucket);
  const sum = (series: number[]): number => series.slice(first, last).reduce((a, b) => a + b, 0);
  const seconds = trigger.duration / 1_000;
  const goodput = sum(recorder.good) / seconds;
  const capacity = dependency.capacityAt(trigger.start);

  const latencies = recorder.calls
    .filter((c) => c.arrival >= trigger.start && c.arrival < trigger.start + trigger.duration)
    .map((c) => Math.min(c.end, duration + 4 * scenario.callerDeadline) - c.arrival)
    .sort((a, b) => a - b);
  const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0;

  const perSecond = (series: number[]): number[] => series.map((n) => (n * 1_000) / bucket);
  return {
    name,
    goodput,
    goodputShare: goodput / capacity,
    amplification: sum(recorder.load) / Math.max(1, sum(recorder.offered)),
    p99,
    recovery: recoveryTime(recorder.calls, scenario, recoveredRatio),
    timeline: {
      bucket,
      offered: perSecond(recorder.offered),
      load: perSecond(recorder.load),
      goodput: perSecond(recorder.good),
      capacity: recorder.offered.map((_, i) => dependency.capacityAt(i * bucket)),
    },
  };
}

/**
 * When, after the trigger, every one-second window of arrivals has at least `ratio` of its calls
 * succeeding within their deadline, to the end of the run: milliseconds after the trigger, or undefined.
 */
function recoveryTime(calls: readonly CallRecord[], scenario: ScenarioOptions, ratio: number): number | undefined {
  const { bucket, duration } = scenario;
  const { trigger } = scenario.dependency;
  const end = trigger.start + trigger.duration;
  const buckets = Math.ceil(duration / bucket);
  const arrived = new Array<number>(buckets).fill(0);
  const good = new Array<number>(buckets).fill(0);
  for (const call of calls) {
    const index = Math.floor(call.arrival / bucket);
    arrived[index]++;
    if (call.good) good[index]++;
  }
  const width = Math.round(1_000 / bucket);
  let recoveredFrom: number | undefined;
  for (let start = Math.floor(end / bucket); start + width <= buckets; start++) {
    let a = 0;
    let g = 0;
    for (let i = start; i < start + width; i++) {
      a += arrived[i];
      g += good[i];
    }
    if (g >= ratio * a) recoveredFrom ??= start;
    else recoveredFrom = undefined;
  }
  return recoveredFrom === undefined ? undefined : recoveredFrom * bucket - end;
}

/**
 * Runs the scenario once per seed (`seeds` runs from `scenario.seed` on): goodput, amplification and p99
 * are the medians, recovery is the slowest run's (never, if one run never recovers), and the timeline is
 * the first run's.
 */
export async function runSeeds(policy: SimPolicy, scenario: ScenarioOptions, seeds: number): Promise<PolicyResult> {
  const runs: PolicyResult[] = [];
  for (let i = 0; i < seeds; i++) runs.push(await runScenario(policy, { ...scenario, seed: scenario.seed + i }));
  const median = (pick: (r: PolicyResult) => number): number => {
    const values = runs.map(pick).sort((a, b) => a - b);
    const middle = values.length >> 1;
    return values.length % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
  };
  const recoveries = runs.map((r) => r.recovery);
  return {
    name: policy.name,
    goodput: median((r) => r.goodput),
    goodputShare: median((r) => r.goodputShare),
    amplification: median((r) => r.amplification),
    p99: median((r) => r.p99),
    recovery: recoveries.includes(undefined) ? undefined : Math.max(...(recoveries as number[])),
    timeline: runs[0].timeline,
  };
}
