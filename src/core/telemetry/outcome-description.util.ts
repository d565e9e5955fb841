import type { Outcome } from '../outcome/outcome.model.js';

/** The type of an error as logs and metrics show it: its `name`, or its class, or `typeof`. @internal */
export function errorType(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name || 'Error';
  if (error === null) return 'null';
  if (typeof error === 'object') return (error.constructor as { name?: string } | undefined)?.name || 'Object';
  return typeof error;
}

/**
 * An outcome in a few safe words: `ok`, or the error's code, HTTP status and type. The message is added
 * only when asked for, since messages may carry hosts, keys or tokens.
 *
 * @internal
 */
export function describeOutcome(outcome: Outcome<unknown>, includeMessage: boolean): string {
  if (outcome.ok) return 'ok';
  const error = outcome.error as
    { code?: unknown; status?: unknown; response?: { status?: unknown } } | null | undefined;
  const parts: string[] = [];
  // Any value but null and undefined can be read (a string or number simply has none of these fields).
  if (error !== null && error !== undefined) {
    if (typeof error.code === 'string' || typeof error.code === 'number') parts.push(String(error.code));
    const status = typeof error.status === 'number' ? error.status : error.response?.status;
    if (typeof status === 'number') parts.push(`HTTP ${status}`);
  }
  parts.push(errorType(outcome.error));
  if (includeMessage && outcome.error instanceof Error && outcome.error.message) {
    parts.push(JSON.stringify(outcome.error.message));
  }
  return parts.join(' ');
}
