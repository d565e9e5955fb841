import { ResilienceValidationError, type ValidationIssue } from '../../src/index.js';
import {
  isUpstreamMode,
  UPSTREAM_MODES,
  UPSTREAM_NAMES,
  type UpstreamMode,
  type UpstreamName,
} from './upstream-mode.model.js';

/** Settings of the steerable upstreams. */
export interface UpstreamOptions {
  /** The latency of the `slow` mode, in milliseconds: above the weather pipeline's attempt timeout (2 s). */
  readonly slowLatency: number;
  /** The mode of each upstream at start. */
  readonly modes: Readonly<Record<UpstreamName, UpstreamMode>>;
}

/** DI token of the upstreams' settings (`upstreamOptionsFromEnv()` unless overridden). */
export const UPSTREAM_OPTIONS = Symbol('UPSTREAM_OPTIONS');

/**
 * The modes at start reproduce the classic tour: the weather upstream fails two calls in three (the
 * retries get through), the catalog primary is slow (the replica answers through hedging).
 */
export const DEFAULT_UPSTREAM_MODES: Readonly<Record<UpstreamName, UpstreamMode>> = {
  weather: 'transient',
  'catalog-primary': 'slow',
  'catalog-replica': 'healthy',
};

/** The environment variable that sets the mode of an upstream at start, e.g. `UPSTREAM_MODE_CATALOG_PRIMARY`. */
export function upstreamModeVariable(name: UpstreamName): string {
  return `UPSTREAM_MODE_${name.toUpperCase().replace(/-/g, '_')}`;
}

/**
 * Reads `UPSTREAM_SLOW_MS` (default 3000) and `UPSTREAM_MODE_<NAME>` per upstream; one
 * `ResilienceValidationError` lists every bad value.
 */
export function upstreamOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): UpstreamOptions {
  const issues: ValidationIssue[] = [];
  const slow = env.UPSTREAM_SLOW_MS === undefined ? 3_000 : Number(env.UPSTREAM_SLOW_MS);
  if (!Number.isInteger(slow) || slow < 1) {
    issues.push({
      path: 'UPSTREAM_SLOW_MS',
      value: env.UPSTREAM_SLOW_MS,
      rule: 'must be a whole number of milliseconds >= 1',
    });
  }
  const modes = { ...DEFAULT_UPSTREAM_MODES };
  for (const name of UPSTREAM_NAMES) {
    const variable = upstreamModeVariable(name);
    const value = env[variable];
    if (value === undefined) continue;
    if (isUpstreamMode(value)) modes[name] = value;
    else issues.push({ path: variable, value, rule: `must be one of ${UPSTREAM_MODES.join(', ')}` });
  }
  if (issues.length > 0) throw new ResilienceValidationError(issues, 'Invalid upstream settings');
  return { slowLatency: slow, modes };
}
