import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { CircuitState, TimeProvider, TimerHandle } from '../../core/index.js';
import type { CircuitInfo, ResiliencePipelineRegistry } from '../../config/index.js';
import type { FleetChannel } from '../store/resilience-store.factory.js';
import type { PipelineStatistics, ResilienceEventStream } from './resilience-event.stream.js';

/** One circuit as an instance of the fleet sees it. @publicApi */
export interface FleetCircuit {
  /** The pipeline (or decorated method, `Class.method`) the breaker belongs to. */
  readonly pipelineName: string;
  /** The pipeline's instance key, when it has one. */
  readonly instanceKey: string | undefined;
  /** The breaker's `name` option, when set. */
  readonly strategyName: string | undefined;
  /** The circuit's state as the instance last read it. */
  readonly state: CircuitState;
  /** While open: milliseconds until a probe is admitted, as of the instance's last publish. */
  readonly retryAfter: number | undefined;
  /** The instance read it from its own memory: the shared store could not be read. */
  readonly stale: boolean;
}

/** One pipeline instance's call figures (last minute) as an instance of the fleet counted them. @publicApi */
export interface FleetPipeline {
  /** The pipeline's name. */
  readonly pipelineName: string;
  /** The pipeline instance's name (a registry key), when it has one. */
  readonly instanceName: string | undefined;
  /** Executions in the last minute. */
  readonly calls: number;
  /** Executions in the last minute that failed. */
  readonly failures: number;
  /** Calls refused by a circuit or a limiter in the last minute. */
  readonly rejections: number;
  /** Calls per second over the last minute. */
  readonly callRate: number;
  /** Over the instance's last executions, in milliseconds (undefined in the fleet's sums). */
  readonly latency: { readonly p50: number; readonly p99: number } | undefined;
}

/** One application instance of the fleet. @publicApi */
export interface FleetInstance {
  /** Its `fleet.instanceName`. */
  readonly name: string;
  /** The instance serving this answer. */
  readonly self: boolean;
  /** Milliseconds since it last published. */
  readonly lastSeen: number;
  /** Not heard of for more than five of its intervals: left out of the totals. */
  readonly stale: boolean;
  /** Its circuits, as of its last publish. */
  readonly circuits: readonly FleetCircuit[];
  /** Its call figures per pipeline instance (those with calls in the last minute). */
  readonly pipelines: readonly FleetPipeline[];
}

/** What `GET <path>/fleet` answers. @publicApi */
export interface FleetView {
  /** False while the shared store cannot be read: then only this instance is listed. */
  readonly available: boolean;
  /** Milliseconds between two publishes of an instance. */
  readonly interval: number;
  /** Every instance, this one first, then by name. */
  readonly instances: readonly FleetInstance[];
  /** Per pipeline instance, the sums over the instances that are not stale. */
  readonly pipelines: readonly (FleetPipeline & { readonly instances: number })[];
}

/** What an instance publishes: compact arrays, at most `MAX_ENTRIES` of each. */
interface Snapshot {
  readonly v: 1;
  readonly at: number;
  readonly interval: number;
  /** [pipelineName, instanceKey, strategyName, state, retryAfter, stale] */
  readonly c: [string, string | null, string | null, CircuitState, number | null, 0 | 1][];
  /** [pipelineName, instanceName, calls, failures, rejections, p50, p99] */
  readonly p: [string, string | null, number, number, number, number | null, number | null][];
}

const MAX_ENTRIES = 200;
const STATES: ReadonlySet<string> = new Set(['closed', 'open', 'half-open', 'isolated']);
/** Instances not heard of for this many intervals are stale; for ten times as long (at least 1 min), forgotten. */
const STALE_INTERVALS = 5;

/**
 * The fleet view: publishes this instance's circuits and call figures through the shared store every
 * `interval` (one publish at a time, from a timer: a call never waits for it), and reads every
 * instance's last snapshot for the dashboard. A store in an outage pauses publishing (the store logs it
 * once); calls are not affected.
 *
 * @internal
 */
export class ResilienceFleet implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: TimerHandle;
  private publishing: Promise<void> | undefined;
  private stopped = false;
  private readonly forgetAfter: number;

  constructor(
    private readonly channel: FleetChannel,
    private readonly registry: ResiliencePipelineRegistry,
    private readonly stream: ResilienceEventStream,
    private readonly time: TimeProvider,
    readonly instanceName: string,
    readonly interval: number,
  ) {
    this.forgetAfter = Math.max(60_000, interval * STALE_INTERVALS * 10);
  }

  /** Publishes at once, then every `interval`. */
  onApplicationBootstrap(): void {
    this.run();
  }

  /** Stops publishing and drops this instance's snapshot (best effort: the store may be gone). */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.time.clearTimeout(this.timer);
    this.timer = undefined;
    await this.publishing;
    await this.channel.forget([this.instanceName]);
  }

  /** Publishes now (after a circuit was driven by hand), unless a publish is under way. */
  publishSoon(): void {
    if (this.publishing || this.stopped) return;
    if (this.timer !== undefined) this.time.clearTimeout(this.timer);
    this.timer = undefined;
    this.run();
  }

  /** Every instance's last snapshot, this one's fresh. */
  async view(): Promise<FleetView> {
    const [own, stored] = await Promise.all([this.snapshot(), this.channel.read()]);
    const now = this.time.now();
    const instances: FleetInstance[] = [instanceOf(this.instanceName, own, true, now)];
    const forgotten: string[] = [];
    for (const [name, text] of stored ?? []) {
      if (name === this.instanceName) continue;
      const snapshot = parse(text);
      if (!snapshot || now - snapshot.at > this.forgetAfter) {
        forgotten.push(name);
        continue;
      }
      instances.push(instanceOf(name, snapshot, false, now));
    }
    if (forgotten.length > 0) void this.channel.forget(forgotten);
    instances.sort((a, b) => Number(b.self) - Number(a.self) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { available: stored !== undefined, interval: this.interval, instances, pipelines: totals(instances) };
  }

  /** One publish, then the next one `interval` after it ended: never two at once, never more often. */
  private run(): void {
    this.publishing = this.publish().finally(() => {
      this.publishing = undefined;
      if (this.stopped) return;
      const timer = this.time.setTimeout(() => {
        this.timer = undefined;
        this.run();
      }, this.interval);
      // A Node timer must not keep the process alive on its own.
      (timer as { unref?: () => void } | undefined)?.unref?.();
      this.timer = timer;
    });
  }

  private async publish(): Promise<void> {
    try {
      const snapshot = await this.snapshot();
      if (this.stopped) return;
      await this.channel.publish(this.instanceName, JSON.stringify(snapshot), this.forgetAfter);
    } catch {
      // Reading the circuits or writing the snapshot never stops the next publish.
    }
  }

  private async snapshot(): Promise<Snapshot> {
    let circuits: CircuitInfo[] = [];
    try {
      circuits = await this.registry.circuits();
      this.stream.observeCircuits(circuits);
    } catch {
      // A store of the user's own that throws: publish the call figures without circuits.
    }
    const stats: PipelineStatistics[] = this.stream.statistics();
    return {
      v: 1,
      at: this.time.now(),
      interval: this.interval,
      c: circuits
        .slice(0, MAX_ENTRIES)
        .map((c) => [
          c.pipelineName,
          c.instanceKey ?? null,
          c.strategyName ?? null,
          c.state,
          c.retryAfter ?? null,
          c.stale ? 1 : 0,
        ]),
      p: stats
        .filter((s) => s.calls + s.rejections > 0)
        .slice(0, MAX_ENTRIES)
        .map((s) => [
          s.pipelineName,
          s.instanceName ?? null,
          s.calls,
          s.failures,
          s.rejections,
          s.latency?.p50 ?? null,
          s.latency?.p99 ?? null,
        ]),
    };
  }
}

/** A snapshot read back from the store, or undefined when it is not one (another version, damage). */
function parse(text: string): Snapshot | undefined {
  try {
    const value = JSON.parse(text) as Partial<Snapshot>;
    if (value.v !== 1 || typeof value.at !== 'number' || !Array.isArray(value.c) || !Array.isArray(value.p)) {
      return undefined;
    }
    return value as Snapshot;
  } catch {
    return undefined;
  }
}

function instanceOf(name: string, snapshot: Snapshot, self: boolean, now: number): FleetInstance {
  const lastSeen = Math.max(0, now - snapshot.at);
  const interval = typeof snapshot.interval === 'number' && snapshot.interval > 0 ? snapshot.interval : 1_000;
  return {
    name,
    self,
    lastSeen,
    stale: !self && lastSeen > interval * STALE_INTERVALS,
    circuits: snapshot.c
      .filter((c) => Array.isArray(c) && typeof c[0] === 'string' && STATES.has(c[3]))
      .map(([pipelineName, instanceKey, strategyName, state, retryAfter, stale]) => ({
        pipelineName,
        instanceKey: instanceKey ?? undefined,
        strategyName: strategyName ?? undefined,
        state,
        retryAfter: retryAfter ?? undefined,
        stale: stale === 1,
      })),
    pipelines: snapshot.p
      .filter((p) => Array.isArray(p) && typeof p[0] === 'string')
      .map(([pipelineName, instanceName, calls, failures, rejections, p50, p99]) => ({
        pipelineName,
        instanceName: instanceName ?? undefined,
        calls: Number(calls) || 0,
        failures: Number(failures) || 0,
        rejections: Number(rejections) || 0,
        callRate: rate(Number(calls) || 0),
        latency: p50 === null || p99 === null ? undefined : { p50: Number(p50), p99: Number(p99) },
      })),
  };
}

function totals(instances: readonly FleetInstance[]): FleetView['pipelines'] {
  const sums = new Map<string, FleetPipeline & { instances: number }>();
  for (const instance of instances) {
    if (instance.stale) continue;
    for (const p of instance.pipelines) {
      const id = `${p.pipelineName}\u0000${p.instanceName ?? ''}`;
      const sum = sums.get(id);
      if (!sum) {
        sums.set(id, { ...p, latency: undefined, instances: 1 });
        continue;
      }
      sums.set(id, {
        ...sum,
        calls: sum.calls + p.calls,
        failures: sum.failures + p.failures,
        rejections: sum.rejections + p.rejections,
        callRate: rate(sum.calls + p.calls),
        instances: sum.instances + 1,
      });
    }
  }
  return [...sums.values()];
}

/** Calls per second over the stats' one-minute window. */
function rate(calls: number): number {
  return Math.round((calls / 60) * 100) / 100;
}
