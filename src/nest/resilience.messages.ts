import { closestName } from '../core/index.js';

/** `rule (did you mean "x"?)`, or the rule alone when no candidate is close. */
function withHint(rule: string, name: string, candidates: Iterable<string>): string {
  const closest = closestName(name, candidates);
  return closest === undefined ? rule : `${rule} (did you mean "${closest}"?)`;
}

/** `rule (did you mean "x"?; known: a, b)`, or `rule (known: …)` when no name is close. */
function withKnown(rule: string, name: string, known: readonly string[]): string {
  const closest = closestName(name, known);
  const list = `known: ${known.join(', ') || 'none'}`;
  return `${rule} (${closest === undefined ? list : `did you mean "${closest}"?; ${list}`})`;
}

/**
 * Every message the Nest layer reports about decorators and module options: the rules of the start-up
 * `ResilienceValidationError` (`ValidationIssue.rule`) and the errors of misapplied decorators.
 *
 * @internal
 */
export const NEST_RULES = {
  notAMethod: (className: string, name: string, methods: readonly string[]) =>
    withHint(`is not a method of ${className}`, name, methods),
  fallbackArity: (arity: number, methodName: string, given: number) =>
    `must take the ${arity} argument(s) of ${methodName} plus the error, or the error alone; it takes ${given}`,
  fallbackNeedsTarget: 'needs a method name or a value',
  unknownPipeline: (name: string, known: readonly string[]) => withKnown('is not a registered pipeline', name, known),
  notAPipelineName: (name: string, known: readonly string[]) =>
    withKnown('names no pipeline or decorated method', name, known),
  noPipelineNamed: (name: string, known: readonly string[]) =>
    withHint(`No resilience pipeline or decorated method is named "${name}"`, name, known) + '.',
  missingSection: (section: string) => `names a pipeline without a "${section}" section`,
  boundElsewhere:
    'is a request-scoped or transient class whose decorated methods another application in this process already bound; run one application per process or make the class a singleton',
  appliedTwice: (decorator: string, method: string) => `@${decorator} is applied twice to ${method}.`,
  notAMethodTarget: (key: string) => `Resilience decorators apply to methods; ${key} is not one.`,
  notACriticality: (value: unknown) =>
    `@WithCriticality takes "critical", "default" or "sheddable"; ${JSON.stringify(value)} is none of them.`,
  criticalityHeader: 'must be a header name (a non-empty string) or false',
  throttleObject: 'must be an object',
  throttleNeedsStore: 'needs the module option store: { redis } to share the limit in',
  unknownThrottleLimit: (name: string, known: readonly string[]) =>
    withKnown('names no limit of the module option throttle.limits', name, known),
  throttleNeedsNames: '@ResilienceThrottle takes the name of at least one limit of the module option throttle.limits.',
} as const;
