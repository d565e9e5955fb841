import type { CircuitBreakerConfig, OptionsValidator, ValidationIssue } from '../../core/index.js';
import { coercePipelineConfig } from '../../config/internal.js';
import { NEST_RULES } from '../resilience.messages.js';

/** The options of the standard HTTP and RPC pipelines, and the `PipelineConfig` section each becomes. */
const SECTION_OF: Readonly<Record<string, string>> = {
  rateLimiter: 'rateLimiter',
  totalTimeout: 'totalTimeout',
  retry: 'retry',
  circuitBreaker: 'circuitBreaker',
  attemptTimeout: 'timeout',
};
const OPTION_OF: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(SECTION_OF).map(([option, section]) => [section, option]),
);
/** The sections that take a bare duration (`attemptTimeout: "2s"`), reported at `<section>.timeout`. */
const SHORTHAND_SECTIONS: ReadonlySet<string> = new Set(['timeout', 'totalTimeout']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A standard pipeline's options with their strings read as all module configuration is (`"2s"`,
 * `"00:00:30"`, `"PT30S"`, `"3"`, `"true"`: the registry's own coercion), so that the cross-option rules
 * compare numbers. Unknown keys and unreadable values are kept as given, for validation to report; an
 * unreadable bare duration stays a string (not the `{ timeout }` form), so it is reported at the option.
 * The input is not changed.
 *
 * @internal
 */
export function coerceStandardPipelineOptions<T>(options: T): T {
  if (!isObject(options)) return options;
  const sections: Record<string, unknown> = {};
  const result: Record<string, unknown> = {};
  for (const [option, value] of Object.entries(options)) {
    if (option in SECTION_OF) sections[SECTION_OF[option]] = value;
    else result[option] = value;
  }
  const coerced = coercePipelineConfig(sections) as unknown as Record<string, unknown>;
  for (const [section, value] of Object.entries(coerced)) {
    const option = OPTION_OF[section];
    const given = options[option];
    result[option] = typeof given === 'string' && isObject(value) ? given : value;
  }
  return result as T;
}

/**
 * Issues the registry found in a standard pipeline registered as `pipelineName`, at the options the
 * user wrote: `pipelines.http:payments.timeout.timeout` becomes `<at>.attemptTimeout` (the bare form) or
 * `<at>.attemptTimeout.timeout` (the object form), `pipelines.http:payments.retry.delay` `<at>.retry.delay`.
 *
 * @internal
 */
export function standardPipelineIssues(
  issues: readonly ValidationIssue[],
  pipelineName: string,
  at: string,
  options: unknown,
): ValidationIssue[] {
  const prefix = `pipelines.${pipelineName}`;
  return issues.map((issue) => {
    if (!issue.path.startsWith(prefix)) return issue;
    const rest = issue.path.slice(prefix.length);
    const match = /^\.([A-Za-z]+)(.*)$/.exec(rest);
    if (!match) return { ...issue, path: `${at}${rest}` };
    const [, section, tail] = match;
    const option = OPTION_OF[section] ?? section;
    const bare =
      SHORTHAND_SECTIONS.has(section) && tail === '.timeout' && !(isObject(options) && isObject(options[option]));
    return { ...issue, path: `${at}.${option}${bare ? '' : tail}` };
  });
}

/**
 * The rules that tie an attempt's timeout to the others: at most the total timeout, and a time-based
 * breaker samples at least two attempts' time (Polly's standard handlers' rules), for the standard HTTP
 * and RPC pipelines and the hedging handler. `at` is where the attempt's options are (`endpoint.` for
 * the hedging handler's endpoints, `''` for a pipeline's).
 *
 * @internal
 */
export function checkAttemptTimeout(
  v: OptionsValidator,
  at: string,
  total: number | undefined,
  attempt: number | undefined,
  breaker: CircuitBreakerConfig | undefined,
): void {
  if (total !== undefined && attempt !== undefined && attempt > total) {
    v.add(`${at}attemptTimeout`, attempt, NEST_RULES.atMostTotalTimeout(total));
  }
  const sampling = breaker && 'samplingDuration' in breaker ? breaker.samplingDuration : undefined;
  if (
    typeof sampling === 'number' &&
    attempt !== undefined &&
    breaker?.kind !== 'consecutive' &&
    breaker?.kind !== 'count-window' &&
    sampling < 2 * attempt
  ) {
    v.add(`${at}circuitBreaker.samplingDuration`, sampling, NEST_RULES.samplesTwoAttempts(attempt));
  }
}
