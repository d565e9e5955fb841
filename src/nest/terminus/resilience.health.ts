import { Inject, Injectable, Module, Optional, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { HealthIndicatorService, TerminusModule, type HealthIndicatorResult } from '@nestjs/terminus';
import { OptionsValidator, type CircuitState } from '../../core/index.js';
import { ResiliencePipelineRegistry, type CircuitInfo } from '../../config/index.js';
import { NEST_RULES } from '../resilience.messages.js';

/** Which circuit states make the check `down` or `degraded`. @publicApi */
export interface CircuitHealthRule {
  /** Default `['isolated']`: a circuit held open by hand is down. */
  down?: readonly CircuitState[];
  /** Default `['open', 'half-open']`: still serving (through fallbacks, other instances), but impaired. */
  degraded?: readonly CircuitState[];
}

/**
 * Options of `ResilienceHealthModule.forRoot`: which circuits make the health check down or degraded.
 *
 * `pipelines` and `include` name pipelines as `registry.circuits()` lists them (`CircuitInfo.pipelineName`):
 * a named pipeline by its name (every instance key of it), a method with inline decorators by
 * `Class.method`. A name that is neither fails the application's start.
 *
 * @publicApi
 */
export interface ResilienceHealthOptions extends CircuitHealthRule {
  /** Rules for named pipelines (e.g. `{ payments: { down: ['open', 'half-open', 'isolated'] } }`). */
  pipelines?: Readonly<Record<string, CircuitHealthRule>>;
  /** Only report the circuits of these pipelines. Default: every circuit. */
  include?: readonly string[];
}

/** DI token of the default `ResilienceHealthOptions`. @publicApi */
export const RESILIENCE_HEALTH_OPTIONS = Symbol.for('nest-resilience:health-options');

const STATES: readonly CircuitState[] = ['closed', 'open', 'half-open', 'isolated'];
const DEFAULT_DOWN: readonly CircuitState[] = ['isolated'];
const DEFAULT_DEGRADED: readonly CircuitState[] = ['open', 'half-open'];

/**
 * A Terminus health indicator over every circuit of the resilience registry: `down` when a circuit is in
 * a state its rule counts as down, `degraded` when in one counted as degraded, `up` otherwise; the data
 * lists each circuit's state, failure ratio and retry-after.
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.resilience.isHealthy('resilience')]); }
 * ```
 *
 * @publicApi
 */
@Injectable()
export class ResilienceHealthIndicator implements OnApplicationBootstrap {
  private readonly defaults: ResilienceHealthOptions;

  constructor(
    private readonly registry: ResiliencePipelineRegistry,
    private readonly indicator: HealthIndicatorService,
    @Optional() @Inject(RESILIENCE_HEALTH_OPTIONS) defaults?: ResilienceHealthOptions,
  ) {
    this.defaults = defaults ?? {};
    validateHealthOptions(this.defaults);
  }

  /**
   * Checks the pipeline names of the rules and `include` list once every pipeline and decorated method
   * is known (decorated methods are bound at module init): an unknown one fails the start.
   */
  onApplicationBootstrap(): void {
    validateHealthOptions(this.defaults, this.registry.knownPipelineNames);
  }

  /**
   * Checks every circuit; `options` override the module's for this check (a name in them that names no
   * pipeline throws a `ResilienceValidationError`).
   */
  async isHealthy<const Key extends string>(
    key: Key,
    options?: ResilienceHealthOptions,
  ): Promise<HealthIndicatorResult<Key>> {
    if (options) validateHealthOptions(options, this.registry.knownPipelineNames);
    const o = { ...this.defaults, ...options };
    const session = this.indicator.check(key);
    const circuits = (await this.registry.circuits()).filter((c) => !o.include || o.include.includes(c.pipelineName));
    let worst: 'up' | 'degraded' | 'down' = 'up';
    const data: Record<string, unknown> = {};
    for (const circuit of circuits) {
      const status = statusOf(circuit, o);
      if (status === 'down' || (status === 'degraded' && worst === 'up')) worst = status;
      data[label(circuit)] = {
        status,
        state: circuit.state,
        failureRatio: Math.round(circuit.failureRatio * 1000) / 1000,
        ...(circuit.retryAfter !== undefined ? { retryAfter: circuit.retryAfter } : {}),
      };
    }
    const result = { circuits: data };
    if (worst === 'down') return session.down(result);
    if (worst === 'degraded') return session.degraded(result);
    return session.up(result);
  }
}

function statusOf(circuit: CircuitInfo, o: ResilienceHealthOptions): 'up' | 'degraded' | 'down' {
  const rules = o.pipelines;
  const rule = rules && Object.hasOwn(rules, circuit.pipelineName) ? rules[circuit.pipelineName] : undefined;
  const down = rule?.down ?? o.down ?? DEFAULT_DOWN;
  const degraded = rule?.degraded ?? o.degraded ?? DEFAULT_DEGRADED;
  if (down.includes(circuit.state)) return 'down';
  if (degraded.includes(circuit.state)) return 'degraded';
  return 'up';
}

function label(circuit: CircuitInfo): string {
  const name =
    circuit.instanceKey === undefined ? circuit.pipelineName : `${circuit.pipelineName}:${circuit.instanceKey}`;
  return circuit.strategyName === undefined ? name : `${name}/${circuit.strategyName}`;
}

function validateRule(v: OptionsValidator, rule: CircuitHealthRule | undefined): void {
  if (typeof rule !== 'object' || rule === null) {
    v.add('', rule, NEST_RULES.object);
    return;
  }
  for (const field of ['down', 'degraded'] as const) {
    const states = rule[field];
    if (states === undefined) continue;
    if (!Array.isArray(states) || (states as readonly unknown[]).some((s) => !STATES.includes(s as CircuitState))) {
      v.add(field, states, `must be an array of ${STATES.join(', ')}`);
    }
  }
}

/**
 * Validates the options' shape and, with `known` (the registry's pipeline names and decorated methods'),
 * the names they give: one `ResilienceValidationError` lists every problem.
 */
function validateHealthOptions(o: ResilienceHealthOptions, known?: readonly string[]): void {
  const v = new OptionsValidator('health');
  validateRule(v, o);
  if (typeof o === 'object' && o !== null) {
    v.knownKeys(o, ['down', 'degraded', 'pipelines', 'include']);
    const pipelines: unknown = o.pipelines;
    if (pipelines !== undefined && (typeof pipelines !== 'object' || pipelines === null || Array.isArray(pipelines))) {
      v.add('pipelines', pipelines, NEST_RULES.rulesByPipeline);
    } else {
      for (const [name, rule] of Object.entries(o.pipelines ?? {})) {
        const at = v.child(`pipelines.${name}`);
        validateRule(at, rule);
        if (typeof rule === 'object' && rule !== null) at.knownKeys(rule, ['down', 'degraded']);
        if (known && !known.includes(name)) at.add('', name, NEST_RULES.notAPipelineName(name, known));
      }
    }
    if (o.include !== undefined && (!Array.isArray(o.include) || o.include.some((n) => typeof n !== 'string'))) {
      v.add('include', o.include, NEST_RULES.pipelineNames);
    } else if (known) {
      const include: readonly string[] = o.include ?? [];
      include.forEach((name, i) => {
        if (!known.includes(name)) v.add(`include[${i}]`, name, NEST_RULES.notAPipelineName(name, known));
      });
    }
  }
  v.throwIfInvalid('Invalid resilience health options');
}

/**
 * Provides `ResilienceHealthIndicator` (and Terminus) with default rules. Needs `ResilienceModule.forRoot`.
 *
 * @publicApi
 */
@Module({})
export class ResilienceHealthModule {
  /** Provides `ResilienceHealthIndicator` for a Terminus health check, with `options` as its rule. */
  static forRoot(options: ResilienceHealthOptions = {}): DynamicModule {
    validateHealthOptions(options);
    return {
      module: ResilienceHealthModule,
      imports: [TerminusModule],
      providers: [{ provide: RESILIENCE_HEALTH_OPTIONS, useValue: options }, ResilienceHealthIndicator],
      exports: [ResilienceHealthIndicator, TerminusModule],
    };
  }
}
