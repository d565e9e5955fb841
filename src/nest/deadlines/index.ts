export { RequestDeadlineInterceptor } from './request-deadline.interceptor.js';
export {
  GRPC_TIMEOUT_HEADER,
  parseGrpcTimeout,
  parseRequestBudget,
  readRequestBudget,
  remainingBudget,
  REQUEST_DEADLINE_HEADER,
} from './request-deadline.propagation.js';
