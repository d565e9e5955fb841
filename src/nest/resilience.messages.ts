import { closestName } from '../core/internal.js';

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
  notAnEventName: 'is not a resilience event name',
  noDecoratedSection: (section: string) =>
    `The strategy catalog has no "${section}" section with a decorator (registerStrategy adds one).`,
  logLevel: (levels: readonly string[]) => `must be false or one of ${levels.join(', ')}`,
  objectOrFalse: 'must be an object or false',
  integerAtLeastOne: 'must be an integer >= 1',
  positiveNumber: 'must be a number > 0',
  object: 'must be an object',
  atMostTotalTimeout: (total: number) => `must be <= totalTimeout (${total})`,
  samplesTwoAttempts: (attempt: number) => `must be >= 2 × attemptTimeout (${2 * attempt})`,
  notWithHedgingHandler: 'must not be set with hedging (the handler is the pipeline)',
  notWithHedgingEndpoints: 'must not be set with hedging (the endpoints are the base URLs)',
  notWithHedgingCircuits: 'must not be set with hedging (every endpoint has its circuit)',
  notWithGet: 'must not be given with method GET',
  needsGuard: 'must list at least one guard (or set unprotected: true to serve the API without one)',
  registeredPipelineName: 'must be the name of a registered pipeline',
  plainJson: 'must be plain JSON data (objects, arrays, strings, finite numbers, booleans, null)',
  factoryOptions: 'must be an options object (the factory returned nothing usable)',
  objectWithRouting: 'must be an object with routing',
  objectWithGroups: 'must be an object with groups',
  objectWithEndpoints: 'must be an object with endpoints',
  scalarObject: 'must be an object of strings, numbers, booleans or null',
  rulesByPipeline: 'must be an object of rules by pipeline name',
  namedClients: 'must be an object of named clients',
  keyedByPattern: 'must be an object keyed by pattern',
  statuses: 'must be an array of statuses',
  pipelineNames: 'must be an array of pipeline names',
  guards: 'must be an array of guards',
  actions: 'must be an array of actions',
  action: 'must be an action: { group, label, method, url, body }',
  absoluteHttpUrl: 'must be an absolute http(s) URL',
  absoluteUrl: 'must be an absolute URL',
  pipelineNameOrOptions: 'must be a pipeline name or standard pipeline options',
  sameOriginPath: 'must be a path on the same origin, starting with a single "/" (no scheme, host or whitespace)',
  nonEmptyString: 'must be a non-empty string',
  endpoints: 'must be a non-empty array of endpoints',
  endpointGroups: 'must be a non-empty array of endpoint groups',
  guard: 'must be a guard class or instance',
  dashboardOption: 'must be a boolean or the dashboard options ({ actions })',
  booleanOrFunction: 'must be a boolean or a function',
  endpoint: 'must be a URL or { url, weight }',
  registeredTwice: 'is registered twice in this module',
  latencyModeOnly: 'applies to latency mode only',
  notACriticality: (value: unknown) =>
    `@WithCriticality takes "critical", "default" or "sheddable"; ${JSON.stringify(value)} is none of them.`,
  criticalityHeader: 'must be a header name (a non-empty string) or false',
  throttleObject: 'must be an object',
  throttleNeedsStore: 'needs the module option store: { redis } to share the limit in',
  unknownThrottleLimit: (name: string, known: readonly string[]) =>
    withKnown('names no limit of the module option throttle.limits', name, known),
  throttleNeedsNames: '@ResilienceThrottle takes the name of at least one limit of the module option throttle.limits.',
} as const;
