export {
  DEFAULT_MAX_OPERATION_KEYS,
  OPERATION_KEY_OVERFLOW,
  OpenTelemetryListener,
  RESILIENCE_METRICS,
  type OpenTelemetryListenerOptions,
  type OperationKeyCapLogger,
  type ResilienceMetricProducer,
} from './opentelemetry.listener.js';
