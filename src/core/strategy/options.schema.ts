import type { OptionsValidator } from './options.validation.js';

/**
 * What an option holds, as configuration data reads it: a `duration` or `number` given as a string is
 * converted (`"2s"`, `"3"`), a `boolean` from `"true"`/`"false"`; `data` (the user's own values) and
 * everything else are kept as given.
 *
 * @publicApi
 */
export type OptionKind =
  'string' | 'number' | 'duration' | 'boolean' | 'choice' | 'function' | 'data' | 'object' | 'list';

/** One option of a strategy: its kind, its rule and its documented default. @publicApi */
export interface OptionSpec {
  /** How configuration reads a string given for it. */
  readonly kind: OptionKind;
  /** The default the strategy uses when the option is not given (documentation). */
  readonly default?: unknown;
  /** The options of a nested object (or of each item of a list), for configuration to read. */
  readonly fields?: Readonly<Record<string, OptionSpec>>;
  /** Reports a value that breaks the option's rule on `v` at `key`; absent: the strategy's `check` does. */
  readonly check?: (v: OptionsValidator, key: string, value: unknown) => void;
}

/**
 * Every option of an options type, each once: the compiler fails when the type gains an option the
 * schema lacks. The schema's keys are the known options (a typo is reported with a suggestion).
 *
 * @publicApi
 */
export type OptionsSchema<T> = { readonly [K in keyof Required<T>]: OptionSpec };

/** The rule of a number option. @publicApi */
export interface NumberRule {
  /** The least value (inclusive unless `exclusiveMin`). */
  min?: number;
  /** The greatest value (inclusive). */
  max?: number;
  /** Whole numbers only. */
  integer?: boolean;
  /** `Infinity` is also accepted. */
  allowInfinity?: boolean;
  /** `min` itself is refused. */
  exclusiveMin?: boolean;
}

/** The rule of a duration option (milliseconds; default at least 0 and at most the largest timer delay). @publicApi */
export interface DurationRule {
  /** The least value (inclusive unless `exclusiveMin`). */
  min?: number;
  /** `min` itself is refused. */
  exclusiveMin?: boolean;
  /** The greatest value (inclusive). */
  max?: number;
}

/**
 * The option kinds a strategy's schema is written with:
 * `{ delay: option.duration({}, 2_000), useJitter: option.boolean(false), onRetry: option.func() }`.
 *
 * @publicApi
 */
export const option = {
  /** A non-empty string (a name). */
  string: (defaultValue?: string): OptionSpec => ({
    kind: 'string',
    default: defaultValue,
    check: (v, key, value) => v.string(key, value),
  }),
  /** A number within `rule` (`integer`, `min`, `max`, `allowInfinity`). */
  number: (rule: NumberRule = {}, defaultValue?: number): OptionSpec => ({
    kind: 'number',
    default: defaultValue,
    check: (v, key, value) => v.number(key, value, rule),
  }),
  /** Milliseconds; configuration also takes `"200ms"`, `"2s"`, `"00:00:30"`, `"PT30S"`. */
  duration: (rule: DurationRule = {}, defaultValue?: number): OptionSpec => ({
    kind: 'duration',
    default: defaultValue,
    check: (v, key, value) => v.duration(key, value, rule),
  }),
  /** A boolean; configuration also takes `"true"` and `"false"`. */
  boolean: (defaultValue?: boolean): OptionSpec => ({
    kind: 'boolean',
    default: defaultValue,
    check: (v, key, value) => v.boolean(key, value),
  }),
  /** One of `values`. */
  oneOf: <V>(values: readonly V[], defaultValue?: V): OptionSpec => ({
    kind: 'choice',
    default: defaultValue,
    check: (v, key, value) => v.oneOf(key, value, values),
  }),
  /** A function (a callback, a generator, a predicate). */
  func: (): OptionSpec => ({ kind: 'function', check: (v, key, value) => v.func(key, value) }),
  /** The user's own value: never converted, any value. */
  data: (): OptionSpec => ({ kind: 'data' }),
  /** Any other option: its kind and rule given in full. */
  custom: (spec: OptionSpec): OptionSpec => spec,
} as const;

/** The known options of a schema, in its order. @publicApi */
export function optionKeys(schema: object): readonly string[] {
  return Object.keys(schema);
}

/**
 * Reports every option of `options` that breaks the schema: unknown keys first (with a suggestion), then
 * each option's rule in the schema's order. Absent options are not checked.
 *
 * @publicApi
 */
export function validateOptions(
  v: OptionsValidator,
  schema: object,
  options: object,
  extraKeys: readonly string[] = [],
): void {
  const specs = schema as Readonly<Record<string, OptionSpec>>;
  v.knownKeys(options, extraKeys.length ? [...optionKeys(schema), ...extraKeys] : optionKeys(schema));
  for (const key of optionKeys(schema)) specs[key].check?.(v, key, (options as Record<string, unknown>)[key]);
}
