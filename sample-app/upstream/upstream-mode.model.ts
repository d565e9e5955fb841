/**
 * What a steerable upstream does with each call:
 *
 * - `healthy`: answers every call;
 * - `transient`: a 503 for two calls in three, in a fixed order (fail, fail, answer, …) that restarts
 *   when the mode is set, so a retry of three gets through;
 * - `outage`: a 503 for every call;
 * - `slow`: answers every call, after the slow latency (longer than the weather pipeline's attempt
 *   timeout).
 */
export const UPSTREAM_MODES = ['healthy', 'transient', 'outage', 'slow'] as const;

/** One of `UPSTREAM_MODES`. */
export type UpstreamMode = (typeof UPSTREAM_MODES)[number];

/** Whether `value` names a mode. */
export function isUpstreamMode(value: unknown): value is UpstreamMode {
  return typeof value === 'string' && (UPSTREAM_MODES as readonly string[]).includes(value);
}

/** The upstreams of the sample app, by the name the control route uses. */
export const UPSTREAM_NAMES = ['weather', 'catalog-primary', 'catalog-replica'] as const;

/** One of `UPSTREAM_NAMES`. */
export type UpstreamName = (typeof UPSTREAM_NAMES)[number];

/** What the control route reports for one upstream. */
export interface UpstreamStatus {
  readonly name: string;
  readonly mode: UpstreamMode;
  /** Requests received since start. */
  readonly requests: number;
  /** Requests not answered yet. */
  readonly inFlight: number;
  readonly description: string;
}
