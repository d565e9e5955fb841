export {
  OpenTelemetryListener,
  RESILIENCE_METRICS,
  type OpenTelemetryListenerOptions,
} from './opentelemetry.listener.js';
