import { STRATEGY_CATALOG, strategyCatalog, type StrategyCatalogLine } from '../catalog/strategy.catalog.js';
import { CONFIG_RULES } from '../config.messages.js';
import {
  strategyRegistration,
  type OptionsValidator,
  type ResiliencePipelineBuilder,
  type StrategyConfigEnvironment,
} from '../../core/index.js';
import type { PipelineConfig, ConfigSectionName, StrategyConfig } from './pipeline-config.model.js';
import type { PredicateRegistry } from './predicate.registry.js';

/** What configuration is applied with. @internal */
export interface PipelineConfigEnvironment {
  readonly predicates: PredicateRegistry;
  /** The services strategies from configuration ask for (the state store, shared limiters). */
  readonly services: StrategyConfigEnvironment;
  /** Set when the sections are those of another pipeline, whose state they share. */
  readonly sharedWith?: string;
}

/** The lines of the catalog that configuration can hold (every line but slots), outermost first. @internal */
export function configSections(): readonly StrategyCatalogLine[] {
  return strategyCatalog().filter((line) => line.registration !== undefined);
}

/**
 * The names of the built-in catalog's configuration sections, outermost first.
 *
 * @deprecated The order is `STRATEGY_CATALOG`'s: `STRATEGY_CATALOG.filter((line) => line.registration).map((line) => line.name)`.
 * @publicApi
 */
export const PIPELINE_SECTION_ORDER: readonly ConfigSectionName[] = STRATEGY_CATALOG.filter(
  (line) => line.registration !== undefined,
).map((line) => line.name as ConfigSectionName);

/** The sections that can be entries of `strategies` (every section except `totalTimeout`). */
function listedSections(): readonly StrategyCatalogLine[] {
  return configSections().filter((line) => line.definition.listed !== false);
}

/**
 * Adds the strategies a `PipelineConfig` describes to a builder, resolving predicate names and handing
 * strategies the environment's services. Problems with the configuration's shape go to `v`; problems
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
    v.add('', config, CONFIG_RULES.sectionsObject);
    return;
  }
  if (config.strategies !== undefined) {
    const others = configSections()
      .map((line) => line.name)
      .filter((s) => config[s as ConfigSectionName] !== undefined);
    if (others.length) v.add('strategies', config.strategies, CONFIG_RULES.cannotCombine(others.join(', ')));
    v.knownKeys(config, ['strategies']);
    if (!Array.isArray(config.strategies)) {
      v.add('strategies', config.strategies, CONFIG_RULES.array);
      return;
    }
    (config.strategies as readonly StrategyConfig[]).forEach((entry, index) =>
      addListedStrategy(builder, entry, `strategies[${index}]`, env, v),
    );
    return;
  }
  const sections = configSections();
  v.knownKeys(config, [...sections.map((line) => line.name), 'strategies']);
  for (const section of sections) {
    const value = config[section.name as ConfigSectionName];
    if (value === undefined) continue;
    const numberOption = section.definition.numberOption;
    if (typeof value === 'number' && numberOption !== undefined) {
      addSection(builder, section, { [numberOption]: value }, section.name, env, v, section.name);
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      addSection(builder, section, { ...(value as Record<string, unknown>) }, section.name, env, v, section.name);
    } else {
      v.add(section.name, value, CONFIG_RULES.sectionValue(numberOption));
    }
  }
}

function addListedStrategy(
  builder: ResiliencePipelineBuilder<unknown>,
  entry: StrategyConfig,
  label: string,
  env: PipelineConfigEnvironment,
  v: OptionsValidator,
): void {
  if (typeof entry !== 'object' || entry === null) {
    v.add(label, entry, CONFIG_RULES.object);
    return;
  }
  const { type, ...data } = entry as StrategyConfig & Record<string, unknown>;
  const listed = listedSections();
  const section = listed.find((s) => s.name === type);
  if (!section) {
    v.add(`${label}.type`, type, CONFIG_RULES.oneOf(listed.map((s) => `"${s.name}"`)));
    return;
  }
  addSection(builder, section, data, label, env, v);
}

function addSection(
  builder: ResiliencePipelineBuilder<unknown>,
  section: StrategyCatalogLine,
  data: Record<string, unknown>,
  label: string,
  env: PipelineConfigEnvironment,
  v: OptionsValidator,
  /** Set for a section of the configuration (not an entry of `strategies`). */
  sectionName?: string,
): void {
  const registration = section.registration!;
  const definition = section.definition;
  if (env.sharedWith !== undefined && definition.sharedWith) data = definition.sharedWith(data, env.sharedWith);
  // Stryker disable next-line ConditionalExpression: equivalent — an absent reference resolves to undefined, and an option set to undefined is not given (isGiven)
  if ('shouldHandle' in data) data.shouldHandle = env.predicates.resolve(data.shouldHandle, v, `${label}.shouldHandle`);
  const options = definition.fromConfig ? definition.fromConfig(data, env.services) : data;
  builder.addStrategy({
    ...strategyRegistration(registration, options, label),
    section: sectionName,
    validate: (sectionIssues, o, pipeline) => {
      registration.validate?.(sectionIssues, o, pipeline);
      definition.validate?.(sectionIssues, o, env.services);
    },
    type: definition.type ?? registration.type,
    create: (o, context) =>
      definition.create ? definition.create(o, context, env.services) : registration.create(o, context),
  });
}
