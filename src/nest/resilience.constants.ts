/** Metadata key of a decorated method's resilience specification (set on the method itself). @internal */
export const RESILIENCE_METHOD_METADATA = Symbol.for('nest-resilience:method');
/** Metadata key of `@UseResiliencePipeline` on a class or handler (read by the interceptor). @internal */
export const RESILIENCE_PIPELINE_METADATA = 'nest-resilience:pipeline';
/** Marks the prototype of a request-scoped or transient class whose methods an application bound. @internal */
export const RESILIENCE_BINDINGS = Symbol.for('nest-resilience:bindings');
/** DI token of the circuit-breaker state store the module uses. @publicApi */
export const CIRCUIT_BREAKER_STATE_STORE = Symbol.for('nest-resilience:CircuitBreakerStateStore');
/** DI token of the problems found in pipeline configuration, reported at start-up. @internal */
export const RESILIENCE_STARTUP_ISSUES = Symbol.for('nest-resilience:startup-issues');
/** DI token of the module's `TimeProvider`. @publicApi */
export const RESILIENCE_TIME_PROVIDER = Symbol.for('nest-resilience:TimeProvider');
/** Metadata key of `@ResilienceThrottle` (the limits a class or handler applies). @internal */
export const RESILIENCE_THROTTLE_LIMITS = 'nest-resilience:throttle-limits';
/** Metadata key of `@SkipResilienceThrottle`. @internal */
export const RESILIENCE_THROTTLE_SKIP = 'nest-resilience:throttle-skip';
