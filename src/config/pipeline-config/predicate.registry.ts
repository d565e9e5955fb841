import {
  anyOf,
  handleAllErrors,
  handleHttpFailure,
  handleOverloadRejection,
  handleRetryableHttpFailure,
  handleTransientHttp,
  handleTransientNetworkErrors,
  isTimeoutRejectedError,
  type OptionsValidator,
  type OutcomePredicate,
} from '../../core/index.js';
import { CONFIG_RULES } from '../config.messages.js';

/** The predicates every registry knows by name. @publicApi */
export const BUILT_IN_PREDICATES: Readonly<Record<string, OutcomePredicate<unknown>>> = {
  'all-errors': handleAllErrors,
  'transient-network': handleTransientNetworkErrors,
  'http-transient': handleTransientHttp,
  'http-failure': handleHttpFailure,
  'http-retryable': handleRetryableHttpFailure,
  overload: handleOverloadRejection,
  timeout: ({ outcome }) => !outcome.ok && isTimeoutRejectedError(outcome.error),
};

/** Named predicates that configuration can refer to. @publicApi */
export class PredicateRegistry {
  private readonly predicates = new Map<string, OutcomePredicate<unknown>>(Object.entries(BUILT_IN_PREDICATES));

  /** Registers `predicate` under `name`, replacing a predicate of that name; returns the registry. */
  register(name: string, predicate: OutcomePredicate<unknown>): this {
    this.predicates.set(name, predicate);
    return this;
  }

  /** The predicate registered under `name`, or `undefined`. */
  get(name: string): OutcomePredicate<unknown> | undefined {
    return this.predicates.get(name);
  }

  /** Every registered name, built-in ones included. */
  get names(): string[] {
    return [...this.predicates.keys()].sort();
  }

  /** Resolves a reference, adding an issue (and returning undefined) for names that are not registered. */
  resolve(reference: unknown, v: OptionsValidator, path: string): OutcomePredicate<unknown> | undefined {
    if (reference === undefined) return undefined;
    if (typeof reference === 'function') return reference as OutcomePredicate<unknown>;
    const names =
      typeof reference === 'string' ? [reference] : Array.isArray(reference) ? (reference as unknown[]) : undefined;
    if (!names || names.length === 0 || names.some((n) => typeof n !== 'string')) {
      v.add(path, reference, CONFIG_RULES.predicateReference);
      return undefined;
    }
    const resolved: OutcomePredicate<unknown>[] = [];
    for (const name of names as string[]) {
      const predicate = this.predicates.get(name);
      if (predicate) resolved.push(predicate);
      else v.add(path, name, CONFIG_RULES.unknownPredicate(name, this.names));
    }
    if (resolved.length !== names.length) return undefined;
    return resolved.length === 1 ? resolved[0] : anyOf(...resolved);
  }
}
