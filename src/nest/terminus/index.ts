export {
  ResilienceHealthIndicator,
  ResilienceHealthModule,
  RESILIENCE_HEALTH_OPTIONS,
  type CircuitHealthRule,
  type ResilienceHealthOptions,
} from './resilience.health.js';
