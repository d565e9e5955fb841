export {
  DEFAULT_RESILIENCE_LOG_LEVELS,
  ResilienceLoggerListener,
  type ResilienceLogLevel,
  type ResilienceLoggingOptions,
} from './resilience-logger.listener.js';
export type { ResilienceEventSummary } from './telemetry-event.summary.js';
