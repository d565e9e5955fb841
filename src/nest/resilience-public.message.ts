import {
  isBrokenCircuitError,
  isDeadlineExceededError,
  isIsolatedCircuitError,
  isRateLimiterRejectedError,
  isResilienceError,
} from '../core/index.js';

/**
 * The message a public error body carries: what happened and the pipeline's public name — never the
 * circuit key, the instance key or an upstream URL that the error's own message may hold.
 *
 * @publicApi
 */
export function publicResilienceMessage(error: unknown, publicNames?: Readonly<Record<string, string>>): string {
  const pipeline = isResilienceError(error) ? error.source?.pipelineName : undefined;
  const name = pipeline === undefined ? undefined : `"${publicNames?.[pipeline] ?? pipeline}"`;
  if (isIsolatedCircuitError(error)) return name ? `The circuit of ${name} is isolated.` : 'A circuit is isolated.';
  if (isBrokenCircuitError(error)) return name ? `The circuit of ${name} is open.` : 'A circuit is open.';
  if (isRateLimiterRejectedError(error)) {
    return name ? `The rate limit of ${name} is reached.` : 'A rate limit is reached.';
  }
  if (isDeadlineExceededError(error)) return "The caller's deadline has passed.";
  return name ? `${name} did not answer in time.` : 'The operation did not answer in time.';
}
