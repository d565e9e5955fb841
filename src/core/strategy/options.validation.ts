import { ResilienceValidationError, type ValidationIssue } from '../resilience.errors.js';
import { RULES } from '../resilience.messages.js';

/**
 * The one rule for "was this option given?": a key that is absent and a key whose value is `undefined`
 * mean the same — not given. So options can be spread and merged
 * (`{ ...defaults, fallbackValue: maybe }`) without an `undefined` counting as a value.
 *
 * @internal
 */
export function isGiven(options: object, key: string): boolean {
  return (options as Record<string, unknown>)[key] !== undefined;
}

/** The largest delay a Node timer accepts (about 24.8 days). @publicApi */
export const MAX_TIMER_DELAY = 2_147_483_647;

/**
 * Collects validation issues under a path prefix. Every check is a no-op for `undefined` (options are
 * optional unless `required` is called; see `isGiven`).
 *
 * @internal
 */
export class OptionsValidator {
  constructor(
    private readonly prefix: string,
    private readonly issues: ValidationIssue[] = [],
  ) {}

  get problems(): readonly ValidationIssue[] {
    return this.issues;
  }

  child(path: string): OptionsValidator {
    return new OptionsValidator(this.path(path), this.issues);
  }

  add(path: string, value: unknown, rule: string): this {
    this.issues.push({ path: this.path(path), value, rule });
    return this;
  }

  /** Adds issues found elsewhere (e.g. by a builder), prefixing nothing. */
  addIssues(issues: readonly ValidationIssue[]): this {
    this.issues.push(...issues);
    return this;
  }

  /** Whether anything was found so far. */
  get isValid(): boolean {
    return this.issues.length === 0;
  }

  required(path: string, value: unknown): boolean {
    if (value === undefined || value === null) {
      this.add(path, value, RULES.required);
      return false;
    }
    return true;
  }

  /** A finite number in [min, max]; `integer` also demands a whole number. */
  number(
    path: string,
    value: unknown,
    rule: { min?: number; max?: number; integer?: boolean; allowInfinity?: boolean; exclusiveMin?: boolean } = {},
  ): this {
    if (value === undefined) return this;
    // Number.isFinite is false for anything but a finite number (NaN, strings and other types included).
    const n = value as number;
    const ok =
      (Number.isFinite(value) || (rule.allowInfinity === true && value === Infinity)) &&
      (!rule.integer || Number.isInteger(value) || value === Infinity) &&
      (rule.min === undefined || (rule.exclusiveMin ? n > rule.min : n >= rule.min)) &&
      (rule.max === undefined || n <= rule.max);
    if (!ok) this.add(path, value, RULES.number(describeNumberRule(rule)));
    return this;
  }

  /** A duration in milliseconds: a finite number >= min (default 0) and <= the largest timer delay. */
  duration(path: string, value: unknown, rule: { min?: number; exclusiveMin?: boolean; max?: number } = {}): this {
    if (typeof value === 'string') {
      return this.add(path, value, RULES.duration);
    }
    return this.number(path, value, {
      min: rule.min ?? 0,
      exclusiveMin: rule.exclusiveMin,
      max: rule.max ?? MAX_TIMER_DELAY,
    });
  }

  boolean(path: string, value: unknown): this {
    if (value !== undefined && typeof value !== 'boolean') this.add(path, value, RULES.boolean);
    return this;
  }

  string(path: string, value: unknown): this {
    if (value !== undefined && (typeof value !== 'string' || value.length === 0)) {
      this.add(path, value, RULES.nonEmptyString);
    }
    return this;
  }

  func(path: string, value: unknown): this {
    if (value !== undefined && typeof value !== 'function') this.add(path, value, RULES.function);
    return this;
  }

  oneOf<T>(path: string, value: unknown, allowed: readonly T[]): this {
    if (value !== undefined && !allowed.includes(value as T)) {
      this.add(path, value, RULES.oneOf(allowed.map((a) => JSON.stringify(a))));
    }
    return this;
  }

  /** Flags keys that no option of this name exists for (catches typos in config files). */
  knownKeys(value: object, known: readonly string[]): this {
    for (const key of Object.keys(value)) {
      if (isGiven(value, key) && !known.includes(key)) {
        this.add(key, (value as Record<string, unknown>)[key], RULES.unknownOption(key, known));
      }
    }
    return this;
  }

  throwIfInvalid(title?: string): void {
    if (this.issues.length > 0) throw new ResilienceValidationError(this.issues, title);
  }

  private path(path: string): string {
    if (!this.prefix) return path;
    if (!path) return this.prefix;
    return path.startsWith('[') ? `${this.prefix}${path}` : `${this.prefix}.${path}`;
  }
}

function describeNumberRule(rule: { min?: number; max?: number; integer?: boolean; exclusiveMin?: boolean }): string {
  const kind = rule.integer ? 'an integer' : 'a number';
  const parts: string[] = [];
  if (rule.min !== undefined) parts.push(`${rule.exclusiveMin ? '>' : '>='} ${rule.min}`);
  if (rule.max !== undefined) parts.push(`<= ${rule.max}`);
  return parts.length ? `${kind} ${parts.join(' and ')}` : kind;
}
