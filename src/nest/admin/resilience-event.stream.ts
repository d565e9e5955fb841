import type { ResilienceEvent, ResilienceEventMap, TelemetryListener } from '../../core/index.js';
import { errorType } from '../../core/internal.js';
import { summarizeEvent, type ResilienceEventSummary } from '../observability/telemetry-event.summary.js';

/** Where an event stream writes: an HTTP response, in practice. @internal */
export interface EventSink {
  /** Returns false when the sink's buffer is full (the caller waits for `drain`). */
  write(chunk: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
  end(): void;
}

/** Options of the admin event stream: buffering, recent events and which events it streams. @publicApi */
export interface ResilienceEventStreamOptions {
  /** Events a client may have waiting before it is dropped as too slow. Default 256. */
  bufferSize?: number;
  /** Recent events kept for the dashboard. Default 100. */
  recentEvents?: number;
  /**
   * The events streamed. Default: every event except the per-call ones (`PipelineExecuting`,
   * `PipelineExecuted`, `ExecutionAttempt`), which feed the statistics instead.
   */
  events?: readonly (keyof ResilienceEventMap)[] | 'all';
  /** Wall clock in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/** Call figures of one pipeline (or instance) over the last minute. @publicApi */
export interface PipelineStatistics {
  /** The pipeline's name. */
  readonly pipelineName: string;
  /** The pipeline instance's name (a registry key), when it has one. */
  readonly instanceName: string | undefined;
  /** Executions per second over the window. */
  readonly callRate: number;
  /** Executions in the window. */
  readonly calls: number;
  /** Executions in the window that failed. */
  readonly failures: number;
  /** Calls refused by a circuit or a limiter. */
  readonly rejections: number;
  /** Over the last (up to 1 024) executions, in milliseconds. */
  readonly latency: { readonly p50: number; readonly p90: number; readonly p99: number } | undefined;
  /** The window, in seconds. */
  readonly window: number;
}

const PER_CALL: ReadonlySet<string> = new Set(['PipelineExecuting', 'PipelineExecuted', 'ExecutionAttempt']);
const WINDOW_SECONDS = 60;
const LATENCY_SAMPLES = 1_024;
const REJECTION_ERRORS: ReadonlySet<string> = new Set([
  'BrokenCircuitError',
  'IsolatedCircuitError',
  'RateLimiterRejectedError',
]);

class Stats {
  /** calls, failures, rejections per second, indexed by second % WINDOW. */
  private readonly seconds = new Array<number>(WINDOW_SECONDS).fill(-1);
  private readonly counts = new Float64Array(WINDOW_SECONDS * 3);
  private readonly latencies = new Float64Array(LATENCY_SAMPLES);
  private samples = 0;

  constructor(
    readonly pipelineName: string,
    readonly instanceName: string | undefined,
  ) {}

  add(second: number, kind: 0 | 1 | 2): void {
    const slot = second % WINDOW_SECONDS;
    if (this.seconds[slot] !== second) {
      this.seconds[slot] = second;
      this.counts[slot * 3] = 0;
      this.counts[slot * 3 + 1] = 0;
      this.counts[slot * 3 + 2] = 0;
    }
    this.counts[slot * 3 + kind]++;
  }

  latency(duration: number): void {
    this.latencies[this.samples++ % LATENCY_SAMPLES] = duration;
  }

  read(second: number): PipelineStatistics {
    let calls = 0;
    let failures = 0;
    let rejections = 0;
    for (let slot = 0; slot < WINDOW_SECONDS; slot++) {
      if (second - this.seconds[slot] >= WINDOW_SECONDS || this.seconds[slot] < 0) continue;
      calls += this.counts[slot * 3];
      failures += this.counts[slot * 3 + 1];
      rejections += this.counts[slot * 3 + 2];
    }
    const n = Math.min(this.samples, LATENCY_SAMPLES);
    let latency: PipelineStatistics['latency'];
    if (n > 0) {
      const sorted = Array.from(this.latencies.subarray(0, n)).sort((a, b) => a - b);
      const at = (q: number) => round(sorted[Math.min(n - 1, Math.ceil(q * n) - 1)]);
      latency = { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
    }
    return {
      pipelineName: this.pipelineName,
      instanceName: this.instanceName,
      callRate: round(calls / WINDOW_SECONDS),
      calls,
      failures,
      rejections,
      latency,
      window: WINDOW_SECONDS,
    };
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

class Subscriber {
  private readonly queue: string[] = [];
  private scheduled = false;
  private waitingForDrain = false;
  closed = false;

  constructor(
    private readonly sink: EventSink,
    private readonly limit: number,
    private readonly onDrop: (subscriber: Subscriber) => void,
  ) {}

  push(chunk: string): void {
    if (this.closed) return;
    if (this.queue.length >= this.limit) {
      // Too slow: drop the client rather than buffer without bound or hold up a call.
      this.close();
      this.onDrop(this);
      return;
    }
    this.queue.push(chunk);
    if (!this.scheduled && !this.waitingForDrain) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    try {
      this.sink.end();
    } catch {
      // the connection is already gone
    }
  }

  private flush(): void {
    this.scheduled = false;
    if (this.closed) return;
    while (this.queue.length > 0) {
      const chunk = this.queue.shift()!;
      let ok: boolean;
      try {
        ok = this.sink.write(chunk);
      } catch {
        this.close();
        this.onDrop(this);
        return;
      }
      if (!ok) {
        this.waitingForDrain = true;
        this.sink.once('drain', () => {
          this.waitingForDrain = false;
          this.flush();
        });
        return;
      }
    }
  }
}

/**
 * A telemetry listener that feeds the admin API: it streams event summaries to subscribed clients
 * (server-sent events) through bounded buffers — a client that falls `bufferSize` events behind is
 * dropped, and a call never waits for a client — keeps the last events, and counts calls, failures,
 * rejections and latencies per pipeline over the last minute.
 *
 * @publicApi
 */
export class ResilienceEventStream implements TelemetryListener {
  private readonly subscribers = new Set<Subscriber>();
  private readonly recent: ResilienceEventSummary[] = [];
  private readonly stats = new Map<string, Stats>();
  private readonly bufferSize: number;
  private readonly recentLimit: number;
  private readonly streamed: ((name: string) => boolean) | undefined;
  private readonly now: () => number;
  private dropped = 0;

  constructor(options: ResilienceEventStreamOptions = {}) {
    this.bufferSize = options.bufferSize ?? 256;
    this.recentLimit = options.recentEvents ?? 100;
    this.now = options.now ?? Date.now;
    const events = options.events;
    if (events === 'all') this.streamed = undefined;
    else if (events) {
      const set = new Set<string>(events);
      this.streamed = (name) => set.has(name);
    } else this.streamed = (name) => !PER_CALL.has(name);
  }

  /** Clients connected now. */
  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Clients dropped so far for falling behind. */
  get droppedCount(): number {
    return this.dropped;
  }

  /**
   * What `write` uses: `PipelineExecuted` and the rejections (the per-pipeline counts) and the streamed
   * events (`events`), never `PipelineExecuting`.
   */
  wants(eventName: ResilienceEvent['eventName']): boolean {
    if (eventName === 'PipelineExecuting') return false;
    if (eventName === 'PipelineExecuted' || eventName === 'OnRateLimiterRejected' || eventName === 'OnCircuitRejected')
      return true;
    return !this.streamed || this.streamed(eventName);
  }

  write(event: ResilienceEvent): void {
    const name = event.eventName;
    if (name === 'PipelineExecuting') return;
    const now = this.now();
    if (name === 'PipelineExecuted') this.count(event, now);
    else if (name === 'OnRateLimiterRejected' || name === 'OnCircuitRejected')
      this.statsOf(event).add(Math.floor(now / 1000), 2);
    if (this.streamed && !this.streamed(name)) return;
    const summary = summarizeEvent(event, now);
    if (!PER_CALL.has(name)) {
      this.recent.push(summary);
      if (this.recent.length > this.recentLimit) this.recent.shift();
    }
    if (this.subscribers.size === 0) return;
    const chunk = `event: resilience\ndata: ${JSON.stringify(summary)}\n\n`;
    for (const subscriber of this.subscribers) subscriber.push(chunk);
  }

  /** Streams every following event to `sink` until it is closed; returns the function that unsubscribes. */
  subscribe(sink: EventSink): () => void {
    const subscriber = new Subscriber(sink, this.bufferSize, (s) => {
      this.subscribers.delete(s);
      this.dropped++;
    });
    this.subscribers.add(subscriber);
    return () => {
      this.subscribers.delete(subscriber);
      subscriber.close();
    };
  }

  /** Sends a comment line to every client (keeps proxies from closing idle connections). */
  heartbeat(): void {
    for (const subscriber of this.subscribers) subscriber.push(': keep-alive\n\n');
  }

  /** The last events, oldest first. */
  recentEvents(): ResilienceEventSummary[] {
    return [...this.recent];
  }

  /** Call figures per pipeline instance over the last minute. */
  statistics(): PipelineStatistics[] {
    const second = Math.floor(this.now() / 1000);
    return [...this.stats.values()].map((s) => s.read(second));
  }

  /** Disconnects every client. */
  close(): void {
    for (const subscriber of this.subscribers) subscriber.close();
    this.subscribers.clear();
  }

  private count(event: ResilienceEvent & { eventName: 'PipelineExecuted' }, now: number): void {
    const stats = this.statsOf(event);
    const second = Math.floor(now / 1000);
    const { outcome, duration } = event.arguments;
    stats.add(second, 0);
    stats.latency(duration);
    // Rejections are counted where they happen (OnCircuitRejected, OnRateLimiterRejected), not as failures.
    if (!outcome.ok && !REJECTION_ERRORS.has(errorType(outcome.error))) stats.add(second, 1);
  }

  private statsOf(event: ResilienceEvent): Stats {
    const { pipelineName = 'pipeline', pipelineInstanceName } = event.source;
    const id = pipelineInstanceName === undefined ? pipelineName : `${pipelineName}\u0000${pipelineInstanceName}`;
    let stats = this.stats.get(id);
    if (!stats) {
      if (this.stats.size >= 1_000) this.stats.clear(); // unbounded instance keys must not grow memory
      this.stats.set(id, (stats = new Stats(pipelineName, pipelineInstanceName)));
    }
    return stats;
  }
}
