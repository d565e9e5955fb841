import type { StrategyCatalogLine } from '../catalog/strategy.catalog.js';
import type { OptionSpec } from '../../core/index.js';
import { configSections } from './pipeline-config.builder.js';
import type { PipelineConfig, PipelineConfigData } from './pipeline-config.model.js';

/**
 * Configuration as data (JSON, YAML, environment variables) often carries numbers as strings. Before a
 * `PipelineConfig` is validated, each section's values are read by its strategy's options schema: an
 * option of kind `duration`, `number` or `boolean` given as a string that says one clearly is
 * converted; anything else is left as given, so validation still reports it with its path, value and
 * rule. The builder API stays typed: this runs only on configuration given to the registry
 * (`ResilienceModule.forRoot`, `forFeature`, `addPipelines`, `reload`).
 */

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

/** A string read as the option's kind says, or the value as given. */
function coerceString(kind: OptionSpec['kind'], value: string): unknown {
  const text = value.trim();
  switch (kind) {
    case 'duration':
      return parseDuration(value) ?? value;
    case 'number':
      if (NUMBER.test(text)) return Number(text);
      return /^\+?inf(inity)?$/i.test(text) ? Infinity : value;
    case 'boolean':
      return text.toLowerCase() === 'true' ? true : text.toLowerCase() === 'false' ? false : value;
    default:
      return value;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function coerceOption(spec: OptionSpec | undefined, value: unknown): unknown {
  if (spec === undefined) return value;
  if (typeof value === 'string') return coerceString(spec.kind, value);
  const fields = spec.fields;
  if (fields === undefined) return value;
  if (spec.kind === 'list' && Array.isArray(value))
    return (value as unknown[]).map((item) => (isPlainObject(item) ? coerceFields(fields, item) : item));
  return isPlainObject(value) ? coerceFields(fields, value) : value;
}

/** A copy of `data` with each option read by its spec; unknown keys are kept as given. */
function coerceFields(
  schema: Readonly<Record<string, OptionSpec>>,
  data: Record<string, unknown>,
): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    copy[key] = Object.hasOwn(schema, key) ? coerceOption(schema[key], value) : value;
  }
  return copy;
}

/** A section's data read by its strategy's schema; a bare string is the shorthand option's value. */
function coerceSection(line: StrategyCatalogLine, value: unknown, bare: boolean): unknown {
  const schema = (line.registration?.options ?? {}) as Readonly<Record<string, OptionSpec>>;
  const shorthand = line.definition.numberOption;
  if (bare && typeof value === 'string' && shorthand !== undefined) {
    const parsed = coerceString(schema[shorthand]?.kind ?? 'number', value);
    // Unreadable: as the long form, so validation names the option and the value.
    return typeof parsed === 'number' ? parsed : { [shorthand]: value };
  }
  return isPlainObject(value) ? coerceFields(schema, value) : value;
}

/**
 * The configuration with strings converted where an option takes a duration, a number or a boolean
 * (see the file comment). The input is not changed.
 *
 * @internal
 */
export function coercePipelineConfig(data: PipelineConfigData | PipelineConfig): PipelineConfig {
  const config = data as Record<string, unknown>;
  if (!isPlainObject(config)) return data as PipelineConfig;
  const lines = new Map(configSections().map((line) => [line.name, line]));
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    const line = lines.get(key);
    if (line) copy[key] = coerceSection(line, value, true);
    else if (key === 'strategies' && Array.isArray(value))
      copy[key] = value.map((entry: unknown) => {
        const entryLine = isPlainObject(entry) ? lines.get(entry.type as string) : undefined;
        return entryLine ? coerceSection(entryLine, entry, false) : entry;
      });
    else copy[key] = value;
  }
  return copy;
}
