export {
  EndpointRouter,
  type EndpointGroup,
  type EndpointRouting,
  type HedgingEndpoint,
  type RoutedEndpoint,
} from './endpoint-groups.routing.js';
export { ResilientHttpClient, authorityOf, type ResilientRequestConfig } from './resilient-http.client.js';
export {
  ResilientHttpModule,
  getResilientHttpClientToken,
  InjectResilientHttpClient,
  type ResilientHttpModuleAsyncOptions,
  type ResilientHttpModuleOptions,
  type ResilientHttpOptionsFactory,
} from './resilient-http.module.js';
export {
  HTTP_ENDPOINT,
  STANDARD_HEDGING_HANDLER_DEFAULTS,
  type EndpointAttemptEventArguments,
  type StandardHedgingHandlerOptions,
} from './standard-hedging.handler.js';
export {
  handleHttpFailure,
  handleRetryableHttpFailure,
  HTTP_REQUEST_INFO,
  IDEMPOTENT_METHODS,
  standardHttpPipeline,
  STANDARD_HTTP_PIPELINE_DEFAULTS,
  type HttpRequestInfo,
  type StandardHttpPipelineOptions,
} from './standard-http-pipeline.js';
