export {
  OpenTelemetryListener,
  RESILIENCE_METRICS,
  type OpenTelemetryListenerOptions,
  type ResilienceMetricProducer,
} from './opentelemetry.listener.js';
