import type { PipelineConfig, PipelineConfigData } from './pipeline-config.model.js';

/**
 * Configuration as data (JSON, YAML, environment variables) often carries numbers as strings. Before a
 * `PipelineConfig` is validated, values at the options that take a duration, a number or a boolean are
 * converted when they are strings that say one clearly; anything else is left as given, so validation
 * still reports it with its path, value and rule. The builder API stays typed: this runs only on
 * configuration given to the registry (`ResilienceModule.forRoot`, `forFeature`, `addPipelines`,
 * `reload`).
 */

/** Options whose value is a duration in milliseconds. */
const DURATION_KEYS: ReadonlySet<string> = new Set([
  'delay',
  'maxDelay',
  'timeout',
  'breakDuration',
  'samplingDuration',
  'slowCallDuration',
  'maxHalfOpenWait',
  'window',
  'replenishmentPeriod',
  'latency',
]);

/** Options whose value is a plain number. */
const NUMBER_KEYS: ReadonlySet<string> = new Set([
  'maxRetryAttempts',
  'maxHedgedAttempts',
  'failureThreshold',
  'failureRatio',
  'minimumThroughput',
  'windowSize',
  'permittedCallsInHalfOpen',
  'successThresholdInHalfOpen',
  'permitLimit',
  'queueLimit',
  'tokenLimit',
  'tokensPerPeriod',
  'segmentsPerWindow',
  'injectionRate',
  'ratio',
  'minRetriesPerSecond',
  'sheddableRatio',
  'initialLimit',
  'minLimit',
  'maxLimit',
  'longWindow',
  'smoothing',
  'tolerance',
  'growth',
  'backoffRatio',
]);

/** Options whose value is a boolean. */
const BOOLEAN_KEYS: ReadonlySet<string> = new Set([
  'useJitter',
  'honorRetryAfter',
  'retryOnBrokenCircuit',
  'waitForHalfOpenVerdict',
  'enabled',
  'distributed',
]);

/** Options that carry the user's own data: never converted. */
const DATA_KEYS: ReadonlySet<string> = new Set(['fallbackValue', 'outcome', 'fault', 'message', 'name', 'circuitKey']);

/** Sections that may be given as a bare number: a duration for the timeouts, a count for the limiter. */
const SHORTHAND_SECTIONS: Readonly<Record<string, 'duration' | 'number'>> = {
  timeout: 'duration',
  totalTimeout: 'duration',
  concurrencyLimiter: 'number',
  adaptiveConcurrency: 'number',
};

/** The option a bare number section stands for, for the number shorthands. */
const SHORTHAND_OPTION: Readonly<Record<string, string>> = {
  concurrencyLimiter: 'permitLimit',
  adaptiveConcurrency: 'initialLimit',
};

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;
const WITH_UNIT = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(ms|s|m|h|d)$/i;
/** .NET `TimeSpan`: `[-][d.]hh:mm:ss[.fffffff]`. */
const TIME_SPAN = /^(-)?(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$/;
/** ISO-8601 durations as Spring Boot (resilience4j) accepts them: `PT30S`, `PT1M30S`, `P1DT2H`. */
const ISO_8601 = /^(-)?P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;

/**
 * Parses a duration into milliseconds: a number (milliseconds), a numeric string (`"1500"`), a number
 * with a unit (`"200ms"`, `"2s"`, `"1.5m"`, `"1h"`, `"1d"`), a .NET `TimeSpan` (`"00:00:30"`,
 * `"1.02:00:00"`) or ISO-8601 (`"PT30S"`). `undefined` for anything else.
 *
 * @publicApi
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (NUMBER.test(text)) return Number(text);
  const unit = WITH_UNIT.exec(text);
  if (unit) return Number(unit[1]) * UNIT_MS[unit[2].toLowerCase()];
  const span = TIME_SPAN.exec(text);
  if (span) {
    const [, minus, days, hours, minutes, seconds, fraction] = span;
    if (Number(minutes) > 59 || Number(seconds) > 59 || Number(hours) > 23) return undefined;
    const ms =
      Number(days ?? 0) * UNIT_MS.d +
      Number(hours) * UNIT_MS.h +
      Number(minutes) * UNIT_MS.m +
      Number(seconds) * UNIT_MS.s +
      (fraction ? Number(`0.${fraction}`) * 1_000 : 0);
    return minus ? -ms : ms;
  }
  const iso = ISO_8601.exec(text);
  if (iso && /\d/.test(text)) {
    const [, minus, days, hours, minutes, seconds] = iso;
    const ms =
      Number(days ?? 0) * UNIT_MS.d +
      Number(hours ?? 0) * UNIT_MS.h +
      Number(minutes ?? 0) * UNIT_MS.m +
      Number(seconds ?? 0) * UNIT_MS.s;
    return minus ? -ms : ms;
  }
  return undefined;
}

function coerceValue(key: string, value: unknown, depth: number): unknown {
  if (DATA_KEYS.has(key)) return value;
  if (typeof value !== 'string') return coerceData(value, depth + 1);
  if (DURATION_KEYS.has(key)) return parseDuration(value) ?? value;
  if (NUMBER_KEYS.has(key)) {
    const text = value.trim();
    if (NUMBER.test(text)) return Number(text);
    if (/^\+?inf(inity)?$/i.test(text)) return Infinity;
    return value;
  }
  if (BOOLEAN_KEYS.has(key)) {
    const text = value.trim().toLowerCase();
    if (text === 'true') return true;
    if (text === 'false') return false;
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * How deep conversion looks. The deepest option is a handful of levels down (`strategies[0].limits[1].window`);
 * below this, values are kept as given (validation reports them), so hostile nesting cannot exhaust the stack.
 */
const MAX_DEPTH = 32;

/** Copies plain objects and arrays, converting the values of known options; other values are kept. */
function coerceData(value: unknown, depth: number): unknown {
  // Stryker disable next-line EqualityOperator: equivalent — no option lives near this depth; the bound only stops hostile nesting
  if (depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => coerceData(item, depth + 1));
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = coerceValue(key, item, depth);
  return copy;
}

/**
 * The configuration with strings converted where an option takes a duration, a number or a boolean
 * (see the file comment). The input is not changed.
 *
 * @internal
 */
export function coercePipelineConfig(data: PipelineConfigData | PipelineConfig): PipelineConfig {
  const config = data as PipelineConfig;
  if (!isPlainObject(config)) return config;
  const copy = coerceData(config, 0) as Record<string, unknown>;
  for (const [section, kind] of Object.entries(SHORTHAND_SECTIONS)) {
    const value = config[section as keyof PipelineConfig];
    if (typeof value !== 'string') continue;
    const parsed = kind === 'duration' ? parseDuration(value) : NUMBER.test(value.trim()) ? Number(value) : undefined;
    // Unreadable: as the long form, so validation names the option and the value.
    copy[section] = parsed ?? { [kind === 'duration' ? 'timeout' : SHORTHAND_OPTION[section]]: value };
  }
  return copy;
}
