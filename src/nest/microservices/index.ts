export {
  ResilientClientsModule,
  ResilientClients,
  getResilientClientToken,
  InjectResilientClient,
  type ResilientClientRegistration,
  type ResilientClientsModuleOptions,
} from './resilient-clients.module.js';
export {
  ResilientClientProxy,
  patternRoute,
  type ResilientCallOptions,
  type ResilientClientMetrics,
} from './resilient-client.proxy.js';
export type { ResilientClientOptions, ResilientPatternOptions } from './resilient-client.options.js';
export {
  handleRetryableRpcFailure,
  handleRpcFailure,
  handleRpcTransportError,
  isRemoteRpcError,
  isRpcTransportError,
  RPC_CALL_INFO,
  RPC_PREDICATES,
  type RemoteRpcErrorPredicate,
  type RpcCallInfo,
} from './rpc.predicates.js';
export {
  STANDARD_RPC_PIPELINE,
  STANDARD_RPC_PIPELINE_DEFAULTS,
  standardRpcPipeline,
  type StandardRpcPipelineOptions,
} from './standard-rpc-pipeline.js';
export { isResilienceRpcError, toResilienceRpcError, type ResilienceRpcError } from './resilience-rpc.error.js';
