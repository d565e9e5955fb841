import { abortReason, type TimeProvider } from '../../src/core/index.js';
import { exponential } from '../seeded.random.js';

/** What degrades the dependency for a while: fewer servers, or slower service. */
export interface Trigger {
  /** `capacity`: `factor` × the servers; `latency`: `factor` × the service time. */
  readonly kind: 'capacity' | 'latency';
  readonly factor: number;
  /** Simulated milliseconds from the start of the run. */
  readonly start: number;
  readonly duration: number;
}

/** The dependency every instance calls: servers working in parallel behind one bounded FIFO queue. */
export interface DependencyOptions {
  /** Requests served at once. */
  readonly servers: number;
  /** Requests waiting for a server; an attempt that finds it full is rejected at once (a 503). */
  readonly queueLimit: number;
  /** Service time: a fixed part plus an exponential part with this mean, in milliseconds. */
  readonly serviceFixed: number;
  readonly serviceRandomMean: number;
  readonly trigger: Trigger;
}

/** The dependency's answer when its queue is full. */
export class DependencyOverloadedError extends Error {
  override readonly name = 'DependencyOverloadedError';
  constructor() {
    super('the dependency is overloaded: its queue is full');
  }
}

/** The one answer to every rejected attempt, as a server sends the same 503 each time (no stack to capture). */
const OVERLOADED = new DependencyOverloadedError();

/** One attempt as the dependency sees it. */
interface Job {
  /** The attempt's deadline, when it carries one; the dependency drops queued work past it. */
  readonly deadline: number;
  /** Set when the caller cancelled an attempt that carries its deadline: the dependency drops it. */
  abandoned: boolean;
  queued: boolean;
  settled: boolean;
  resolve: () => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** What the dependency reports; the scenario turns it into rates. */
export interface DependencyListener {
  /** An attempt reached the dependency (admitted or rejected). */
  onArrival(now: number): void;
}

/**
 * The simulated dependency. Attempts that carry a deadline (`deadline` finite) are dropped from the queue
 * once their caller gave up or their deadline has passed — the server checks before it starts the work, as
 * a gRPC server checks `grpc-timeout`. Attempts without one are served whoever still waits for them,
 * as a plain HTTP server serves a request whose client has timed out. Service is never pre-empted.
 */
export class Dependency {
  private readonly queue: (Job | undefined)[] = [];
  private head = 0;
  /** Jobs in the queue that somebody may still want (abandoned ones wait there to be dropped). */
  private waiting = 0;
  private busy = 0;

  constructor(
    private readonly options: DependencyOptions,
    private readonly time: TimeProvider,
    private readonly random: () => number,
    private readonly listener: DependencyListener,
  ) {}

  /** Requests the dependency can serve per second at simulated time `at` (its mean capacity). */
  capacityAt(at: number): number {
    const { serviceFixed, serviceRandomMean } = this.options;
    return (this.serversAt(at) * 1_000) / ((serviceFixed + serviceRandomMean) * this.slowdownAt(at));
  }

  /**
   * One attempt: resolves when a server has done the work. Rejects at once with the signal's reason when
   * the caller cancels (as `fetch` does); the dependency learns of it only when the attempt carries a
   * deadline (`deadline` finite).
   */
  call(signal: AbortSignal | undefined, deadline = Infinity): Promise<void> {
    const now = this.time.now();
    this.listener.onArrival(now);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.waiting >= this.options.queueLimit) {
      return Promise.reject(OVERLOADED);
    }
    return new Promise<void>((resolve, reject) => {
      const job: Job = {
        deadline,
        abandoned: false,
        queued: true,
        settled: false,
        resolve,
        reject,
        signal,
        onAbort: undefined,
      };
      if (signal) {
        job.onAbort = () => {
          if (Number.isFinite(deadline) && job.queued) {
            job.abandoned = true;
            this.waiting--;
          }
          settle(job);
          reject(abortReason(signal));
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.waiting++;
      this.startWork();
    });
  }

  private triggeredAt(at: number): boolean {
    const { start, duration } = this.options.trigger;
    return at >= start && at < start + duration;
  }

  private serversAt(at: number): number {
    const { servers, trigger } = this.options;
    return this.triggeredAt(at) && trigger.kind === 'capacity'
      ? Math.max(1, Math.round(servers * trigger.factor))
      : servers;
  }

  private slowdownAt(at: number): number {
    const { trigger } = this.options;
    return this.triggeredAt(at) && trigger.kind === 'latency' ? trigger.factor : 1;
  }

  private serviceTime(): number {
    const { serviceFixed, serviceRandomMean } = this.options;
    return (serviceFixed + exponential(this.random, serviceRandomMean)) * this.slowdownAt(this.time.now());
  }

  private startWork(): void {
    while (this.busy < this.serversAt(this.time.now())) {
      const job = this.take();
      if (!job) return;
      this.busy++;
      this.time.setTimeout(() => this.finish(job), this.serviceTime());
    }
  }

  /** The next queued job worth serving: abandoned or expired work is dropped without cost. */
  private take(): Job | undefined {
    const now = this.time.now();
    while (this.head < this.queue.length) {
      const job = this.queue[this.head]!;
      this.queue[this.head++] = undefined;
      if (this.head === this.queue.length) {
        this.queue.length = 0;
        this.head = 0;
      }
      job.queued = false;
      if (job.abandoned) continue;
      this.waiting--;
      if (now >= job.deadline) {
        if (!job.settled) {
          settle(job);
          job.reject(OVERLOADED);
        }
        continue;
      }
      return job;
    }
    return undefined;
  }

  private finish(job: Job): void {
    this.busy--;
    if (!job.settled) {
      settle(job);
      job.resolve();
    }
    this.startWork();
  }

  /** Runs queued work when the trigger ends (capacity comes back without any arrival). */
  wake(): void {
    this.startWork();
  }
}

function settle(job: Job): void {
  job.settled = true;
  if (job.onAbort) job.signal!.removeEventListener('abort', job.onAbort);
  job.onAbort = undefined;
}
