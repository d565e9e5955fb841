import { withHint } from './utils/did-you-mean.util.js';

/**
 * Every rule text the engine's validation reports (`ValidationIssue.rule`), in one place, so the
 * wording stays consistent and a reader finds every message the engine can give.
 *
 * @internal
 */
export const RULES = {
  required: 'is required',
  requiredOr: (alternative: string) => `is required (or give ${alternative})`,
  unknownOption: (key: string, known: readonly string[]) => withHint('is not a known option', key, known),
  duration: 'must be a duration: milliseconds, or in configuration "200ms", "2s", "1m", "00:00:30"',
  boolean: 'must be a boolean',
  nonEmptyString: 'must be a non-empty string',
  string: 'must be a string',
  function: 'must be a function',
  array: 'must be an array',
  nonEmptyArray: 'must be a non-empty array',
  object: 'must be an object',
  number: (rule: string) => `must be ${rule}`,
  oneOf: (allowed: readonly string[]) => `must be one of ${allowed.join(', ')}`,
  instanceOf: (type: string) => `must be a ${type}`,
  noSuchSection: 'must be a configuration section of the pipeline (it has none by that name)',
  atLeast: (other: string) => `must be >= ${other}`,
  atMost: (other: string) => `must be <= ${other}`,
  notWith: (other: string) => `must not be given together with ${other}`,
  cannotCombine: (others: string) => `cannot be combined with ${others}`,
  outcome: 'must be an outcome: { ok: true, value } or { ok: false, error }',
  retryBudget: 'must be a RetryBudget or its options',
  telemetryListener: 'must have a write(event) method',
  builtAlready: 'cannot be changed or built again after build()',
  circuitKeyRequired: 'is required with a shared stateStore when the pipeline has no name',
  circuitNeverOpens: (windowSize: number) => `must be <= windowSize (${windowSize}), or the circuit can never open`,
  onlyForKinds: (kinds: readonly string[], kind: string) =>
    `applies only to kind ${kinds.map((k) => `"${k}"`).join(' or ')}, not "${kind}"`,
  limitNeedsKind: 'needs a kind',
  limitNotForKind: (kind: string) => `does not apply to kind "${kind}"`,
  distributedKinds: 'applies to kind "token-bucket" or "sliding-window"',
  distributedNeedsStore: 'needs a distributed store to share the limit in (the module option store: { redis })',
  fleetNeedsStore:
    'needs a store the instances share the window through (the module option store: { redis }, or fleet.store)',
  fleetOptions: 'must be true, false or an object of fleet options ({ store, key, syncInterval })',
  fleetKeyRequired: 'is required when the pipeline has no name',
} as const;
