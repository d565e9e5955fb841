import type { BenchScenario } from './bench.harness.js';
import { circuitBreakerScenarios } from './circuit-breaker.bench.js';
import { composedScenarios } from './composed.bench.js';
import { coreScenarios } from './core.bench.js';
import { limitScenarios } from './limits.bench.js';
import { observabilityScenarios } from './observability.bench.js';
import { timeoutScenarios } from './timeout.bench.js';

/** Every scenario of `npm run bench`, in table order. */
export function allScenarios(): BenchScenario[] {
  return [
    ...timeoutScenarios(),
    ...composedScenarios(),
    ...coreScenarios(),
    ...circuitBreakerScenarios(),
    ...limitScenarios(),
    ...observabilityScenarios(),
  ];
}
