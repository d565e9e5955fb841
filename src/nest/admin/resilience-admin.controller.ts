import {
  ForbiddenException,
  Get,
  Header,
  HttpCode,
  Inject,
  NotFoundException,
  Optional,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  strategyCatalog,
  ResiliencePipelineRegistry,
  type CircuitInfo,
  type LimiterInfo,
  type PipelineConfig,
} from '../../config/index.js';
import { DASHBOARD_CSS, DASHBOARD_JS, renderDashboardHtml } from './dashboard.assets.js';
import { RESILIENCE_ADMIN_OPTIONS, type ResolvedAdminOptions } from './resilience-admin.options.js';
import { ResilienceEventStream, type CircuitStateHistory, type PipelineStatistics } from './resilience-event.stream.js';
import { ResilienceFleet, type FleetView } from './resilience-fleet.service.js';
import { RESILIENCE_EVENT_STREAM } from '../module/telemetry-listeners.factory.js';
import type { ResilienceEventSummary } from '../observability/telemetry-event.summary.js';
import { NEST_RULES } from '../resilience.messages.js';

/** One strategy of a pipeline, outermost first. @publicApi */
export interface AdminStrategyDescription {
  /** The kind of strategy (`retry`, `circuit-breaker`, …). */
  readonly type: string;
  /** The strategy's `name` option, when set. */
  readonly name: string | undefined;
}

/** One pipeline as the admin API describes it. @publicApi */
export interface AdminPipelineDescription {
  /** The pipeline's name. */
  readonly name: string;
  /** The strategies in the order they run, outermost first. */
  readonly strategies: readonly AdminStrategyDescription[];
  /** The configuration, with functions and secret-looking fields replaced. Undefined for code-built pipelines. */
  readonly options: unknown;
}

/** What the admin API serves; the controller class is made per `forRoot` with its path and guards. @internal */
export class ResilienceAdminController {
  private html: string | undefined;

  constructor(
    @Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry,
    @Inject(RESILIENCE_EVENT_STREAM) private readonly stream: ResilienceEventStream,
    @Inject(RESILIENCE_ADMIN_OPTIONS) private readonly options: ResolvedAdminOptions,
    @Optional() @Inject(ResilienceFleet) private readonly fleet?: ResilienceFleet,
  ) {}

  @Get()
  info(): { control: boolean; dashboard: boolean; fleet: boolean; instanceName: string | undefined } {
    return {
      control: this.options.control,
      dashboard: this.options.dashboard,
      fleet: this.fleet !== undefined,
      instanceName: this.fleet?.instanceName,
    };
  }

  @Get('pipelines')
  pipelines(): AdminPipelineDescription[] {
    return this.registry.pipelineNames.map((name) => describePipeline(this.registry, name));
  }

  @Get('circuits')
  async circuits(): Promise<CircuitInfo[]> {
    const circuits = await this.registry.circuits();
    this.stream.observeCircuits(circuits);
    return circuits;
  }

  /** The circuits' last state changes (events and the reads of the circuits), oldest first. */
  @Get('history')
  history(): CircuitStateHistory[] {
    return this.stream.stateHistory();
  }

  /** Every instance of the fleet (with `fleet` on). */
  @Get('fleet')
  fleetView(): Promise<FleetView> {
    if (!this.fleet) throw new NotFoundException('The fleet view is not enabled (admin option fleet).');
    return this.fleet.view();
  }

  @Get('circuits/:name')
  async circuit(@Param('name') name: string, @Query('key') key?: string): Promise<CircuitInfo> {
    this.requireKnown(name);
    const circuit = await this.registry.circuitState(name, key || undefined);
    if (!circuit) throw new NotFoundException('No circuit breaker of that name.');
    return circuit;
  }

  @Post('circuits/:name/isolate')
  @HttpCode(200)
  isolate(@Param('name') name: string, @Query('key') key?: string): Promise<CircuitInfo[]> {
    return this.drive(name, key, 'isolate');
  }

  @Post('circuits/:name/close')
  @HttpCode(200)
  close(@Param('name') name: string, @Query('key') key?: string): Promise<CircuitInfo[]> {
    return this.drive(name, key, 'close');
  }

  @Get('limiters')
  limiters(): LimiterInfo[] {
    return this.registry.limiterStatistics();
  }

  @Get('stats')
  stats(): PipelineStatistics[] {
    return this.stream.statistics();
  }

  @Get('events/recent')
  recentEvents(): ResilienceEventSummary[] {
    return this.stream.recentEvents();
  }

  /** Server-sent events: one `resilience` event per telemetry event, as JSON. */
  @Get('events')
  events(@Req() request: AdminRequest, @Res() reply: AdminReply): void {
    const res = reply.raw ?? reply;
    const req = request.raw ?? request;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('event: ready\nretry: 2000\ndata: {}\n\n');
    const unsubscribe = this.stream.subscribe(res);
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), this.options.heartbeatInterval);
    heartbeat.unref();
    const stop = (): void => {
      clearInterval(heartbeat);
      unsubscribe();
    };
    req.once('close', stop);
    res.once('close', stop);
  }

  @Get('dashboard')
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  dashboard(): string {
    this.requireDashboard();
    return (this.html ??= renderDashboardHtml(this.options.actionGroups, this.options.signInUrl));
  }

  @Get('dashboard.js')
  @Header('content-type', 'text/javascript; charset=utf-8')
  dashboardScript(): string {
    this.requireDashboard();
    return DASHBOARD_JS;
  }

  @Get('dashboard.css')
  @Header('content-type', 'text/css; charset=utf-8')
  dashboardStyle(): string {
    this.requireDashboard();
    return DASHBOARD_CSS;
  }

  private async drive(name: string, key: string | undefined, action: 'isolate' | 'close'): Promise<CircuitInfo[]> {
    if (!this.options.control) throw new ForbiddenException('Circuit control is not enabled.');
    this.requireKnown(name);
    const instance = key || undefined;
    const driven =
      action === 'isolate'
        ? await this.registry.isolateCircuit(name, instance)
        : await this.registry.closeCircuit(name, instance);
    if (driven === 0) throw new NotFoundException('No circuit breaker of that name.');
    this.fleet?.publishSoon();
    return (await this.registry.circuits()).filter(
      (c) => c.pipelineName === name && (instance === undefined || c.instanceKey === instance),
    );
  }

  /** 404 for a name that is no pipeline or decorated method, with the closest one when there is one. */
  private requireKnown(name: string): void {
    const known = this.registry.knownPipelineNames;
    if (!known.includes(name)) throw new NotFoundException(NEST_RULES.noPipelineNamed(name, known));
  }

  private requireDashboard(): void {
    if (!this.options.dashboard) throw new NotFoundException();
  }
}

/** The parts of Express's and Fastify's request and reply the stream uses. */
interface AdminRequest {
  raw?: AdminRequest;
  once(event: 'close', listener: () => void): unknown;
}
interface AdminReply {
  raw?: AdminReply;
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string): boolean;
  once(event: 'close' | 'drain', listener: () => void): unknown;
  end(): void;
}

function describePipeline(registry: ResiliencePipelineRegistry, name: string): AdminPipelineDescription {
  const config = registry.getPipelineConfig(name);
  if (config) return { name, strategies: strategiesOfConfig(config), options: redact(config, 0) };
  const strategies = (registry.tryGetPipeline(name)?.describe() ?? []).map(({ type, name: strategyName }) => ({
    type,
    name: strategyName,
  }));
  return { name, strategies, options: undefined };
}

function strategiesOfConfig(config: PipelineConfig): AdminStrategyDescription[] {
  const nameOf = (value: unknown): string | undefined =>
    typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string'
      ? (value as { name: string }).name
      : undefined;
  const typeOf = new Map(strategyCatalog().map((line) => [line.name, line.type]));
  if (config.strategies) {
    return config.strategies.map((s) => ({ type: typeOf.get(s.type) ?? s.type, name: nameOf(s) }));
  }
  const sections = config as Readonly<Record<string, unknown>>;
  return strategyCatalog()
    .filter((line) => line.type !== undefined && sections[line.name] !== undefined)
    .map((line) => ({ type: line.type!, name: nameOf(sections[line.name]) }));
}

const SECRET_KEY = /secret|passw|token|credential|authori[sz]ation|api[-_]?key|private|cookie/i;

/** A JSON-safe copy of options: functions, class instances and secret-looking fields replaced. @internal */
export function redact(value: unknown, depth: number): unknown {
  if (typeof value === 'function') return '[function]';
  if (value === null || typeof value !== 'object') return typeof value === 'bigint' ? String(value) : value;
  if (depth > 6) return '[…]';
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== Object.prototype && proto !== null) return `[${value.constructor.name}]`;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}
