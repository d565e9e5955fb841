import type {
  StrategyDefinition,
  StrategyPipelineInfo,
  StrategySectionDefinition,
} from './resilience-strategy.interface.js';
import { registerResilienceEvents, type ResilienceEventDescriptors } from '../telemetry/event.catalog.js';
import type { ResilienceEventMap } from '../telemetry/resilience-event.model.js';
import type { OptionsValidator } from './options.validation.js';
import { validateOptions } from './options.schema.js';

/**
 * Completes a strategy folder's descriptor: its validation follows from its options schema (unknown
 * keys, each option's rule) and then its own `check`; its events become known to every telemetry
 * reader (logs, OpenTelemetry, the admin API, the dashboard).
 *
 * ```ts
 * export const bulkheadXStrategy: StrategyDescriptor<BulkheadXOptions, { bulkheadX: BulkheadXConfig }> =
 *   defineStrategy({
 *     type: 'bulkhead-x',
 *     options: { name: option.string(), limit: option.number({ min: 1, integer: true }, 10) },
 *     events: { OnBulkheadX: { severity: 'warning', describe: (a) => [{ label: 'limit', value: a.limit }] } },
 *     create: (options, context) => new BulkheadXStrategy(options, context),
 *     sections: { bulkheadX: section({ decorator: 'BulkheadX', numberOption: 'limit' }) },
 *   });
 * ```
 *
 * @publicApi
 */
export function defineStrategy<TOptions extends object, TConfigs extends Record<string, unknown>>(
  descriptor: StrategyDescriptorInput<TOptions, TConfigs>,
): StrategyDefinition<TOptions, TConfigs> {
  const eventDescriptors = Array.isArray(descriptor.events)
    ? descriptor.eventDescriptors
    : (descriptor.events as ResilienceEventDescriptors);
  if (eventDescriptors) registerResilienceEvents(eventDescriptors);
  const events = Array.isArray(descriptor.events)
    ? (descriptor.events as readonly (keyof ResilienceEventMap)[])
    : (Object.keys(descriptor.events) as (keyof ResilienceEventMap)[]);
  const schema = descriptor.options;
  const validate =
    descriptor.validate ??
    (schema &&
      ((v: OptionsValidator, options: TOptions, pipeline: StrategyPipelineInfo) => {
        validateOptions(v, schema, options);
        descriptor.check?.(v, options, pipeline);
      }));
  return { ...descriptor, events, eventDescriptors, validate };
}

/**
 * What `defineStrategy` takes: a `StrategyDefinition` whose `events` are the event descriptors
 * themselves (their names follow).
 *
 * @publicApi
 */
export type StrategyDescriptorInput<TOptions extends object, TConfigs extends Record<string, unknown>> = Omit<
  StrategyDefinition<TOptions, TConfigs>,
  'events'
> & { readonly events: ResilienceEventDescriptors | StrategyDefinition['events'] };

/**
 * A configuration section of a descriptor, with the type of its data (`section<RetryConfig>({ decorator: 'Retry' })`).
 *
 * @publicApi
 */
export function section<TConfig, TOptions = never>(
  definition: StrategySectionDefinition<TOptions, TConfig> = {},
): StrategySectionDefinition<TOptions, TConfig> {
  return definition;
}
