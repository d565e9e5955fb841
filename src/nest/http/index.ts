export { ResilientHttpClient, authorityOf, type ResilientRequestConfig } from './resilient-http.client.js';
export {
  ResilientHttpModule,
  getResilientHttpClientToken,
  InjectResilientHttpClient,
  type ResilientHttpModuleOptions,
} from './resilient-http.module.js';
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
