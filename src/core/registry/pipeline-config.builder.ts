import type { CircuitBreakerStateStore } from '../circuit-breaker/circuit-breaker-state-store.interface.js';
import type { CircuitBreakerManualControl } from '../circuit-breaker/circuit-breaker.manual-control.js';
import { builtInStrategies, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import type { RateLimiter } from '../rate-limiter/rate-limiter.model.js';
import type { RateLimiterStrategyOptions } from '../rate-limiter/rate-limiter.options.js';
import type { OptionsValidator } from '../utils/options.validation.js';
import {
  PIPELINE_SECTION_ORDER,
  type PipelineConfig,
  type PipelineSection,
  type StrategyConfig,
} from './pipeline-config.model.js';
import type { PredicateRegistry } from './predicate.registry.js';

/** What configuration is applied with. @internal */
export interface PipelineConfigEnvironment {
  readonly predicates: PredicateRegistry;
  readonly stateStore: CircuitBreakerStateStore;
  /** Given to circuit breakers that bring no manual control of their own. */
  readonly circuitControl?: CircuitBreakerManualControl;
  /** Gives a limit section the limiter it shares with others (per pipeline name and key). */
  readonly sharedLimiter?: (
    section: 'rateLimiter' | 'concurrencyLimiter',
    options: RateLimiterStrategyOptions,
  ) => RateLimiter;
}

/** Every section is a strategy type, except `totalTimeout` (a `timeout`). */
const STRATEGY_TYPES = PIPELINE_SECTION_ORDER.filter(
  (section): section is Exclude<PipelineSection, 'totalTimeout'> => section !== 'totalTimeout',
);

/**
 * Adds the strategies a `PipelineConfig` describes to a builder, resolving predicate names and giving
 * circuit breakers the shared state store. Problems with the configuration's shape go to `v`; problems
 * with strategy options are reported by `builder.build()` under the same paths.
 *
 * @internal
 */
export function applyPipelineConfig(
  builder: ResiliencePipelineBuilder<unknown>,
  config: PipelineConfig,
  env: PipelineConfigEnvironment,
  v: OptionsValidator,
): void {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    v.add('', config, 'must be an object of strategy sections');
    return;
  }
  if (config.strategies !== undefined) {
    const others = PIPELINE_SECTION_ORDER.filter((s) => config[s] !== undefined);
    if (others.length) v.add('strategies', config.strategies, `cannot be combined with ${others.join(', ')}`);
    v.knownKeys(config, ['strategies']);
    if (!Array.isArray(config.strategies)) {
      v.add('strategies', config.strategies, 'must be an array');
      return;
    }
    (config.strategies as readonly StrategyConfig[]).forEach((entry, index) =>
      addStrategy(builder, entry, `strategies[${index}]`, env, v),
    );
    return;
  }
  v.knownKeys(config, [...PIPELINE_SECTION_ORDER, 'strategies']);
  for (const section of PIPELINE_SECTION_ORDER) {
    const value = config[section];
    if (value === undefined) continue;
    const type = section === 'totalTimeout' ? 'timeout' : section;
    const numberKey = section === 'concurrencyLimiter' ? 'permitLimit' : 'timeout';
    const entry = (typeof value === 'number' ? { type, [numberKey]: value } : { ...value, type }) as StrategyConfig;
    addStrategy(builder, entry, section, env, v);
  }
}

function addStrategy(
  builder: ResiliencePipelineBuilder<unknown>,
  entry: StrategyConfig,
  label: string,
  env: PipelineConfigEnvironment,
  v: OptionsValidator,
): void {
  if (typeof entry !== 'object' || entry === null) {
    v.add(label, entry, 'must be an object');
    return;
  }
  const { type, ...options } = entry as StrategyConfig & Record<string, unknown>;
  if (!STRATEGY_TYPES.includes(type)) {
    v.add(`${label}.type`, type, `must be one of ${STRATEGY_TYPES.map((t) => `"${t}"`).join(', ')}`);
    return;
  }
  if ('shouldHandle' in options) {
    options.shouldHandle = env.predicates.resolve(options.shouldHandle, v, `${label}.shouldHandle`);
  }
  switch (type) {
    case 'fallback':
      builder.addStrategy({ ...builtInStrategies.fallback(options as never), label });
      break;
    case 'retry':
      builder.addStrategy({ ...builtInStrategies.retry(options as never), label });
      break;
    case 'circuitBreaker':
      builder.addStrategy({
        ...builtInStrategies.circuitBreaker({
          manualControl: env.circuitControl,
          ...options,
          stateStore: env.stateStore,
        } as never),
        label,
      });
      break;
    case 'timeout':
      builder.addStrategy({ ...builtInStrategies.timeout(options as never), label });
      break;
    case 'hedging':
      builder.addStrategy({ ...builtInStrategies.hedging(options as never), label });
      break;
    case 'rateLimiter':
    case 'concurrencyLimiter': {
      const limit = (
        type === 'concurrencyLimiter' ? { ...options, kind: 'concurrency' } : options
      ) as RateLimiterStrategyOptions;
      const registration = builtInStrategies.rateLimiter(limit);
      // Validate the definition as given; share the limiter it describes when the environment can.
      builder.addStrategy({
        ...registration,
        type: type === 'concurrencyLimiter' ? 'concurrency-limiter' : 'rate-limiter',
        label,
        create: (o, context) =>
          registration.create(
            env.sharedLimiter && !o.limiter
              ? { name: o.name, onRejected: o.onRejected, limiter: env.sharedLimiter(type, o) }
              : o,
            context,
          ),
      });
      break;
    }
    case 'chaosLatency':
      builder.addStrategy({ ...builtInStrategies.chaosLatency(options as never), label });
      break;
    case 'chaosFault': {
      const { message, ...fault } = options as { message?: string; fault?: unknown };
      const withFault =
        message !== undefined && fault.fault === undefined ? { ...fault, fault: new Error(message) } : fault;
      builder.addStrategy({ ...builtInStrategies.chaosFault(withFault as never), label });
      break;
    }
  }
}
