export { ResilienceAdminModule } from './resilience-admin.module.js';
export type {
  DashboardAction,
  DashboardActionMethod,
  ResilienceAdminOptions,
  ResilienceDashboardOptions,
} from './resilience-admin.options.js';
export type { AdminPipelineDescription, AdminStrategyDescription } from './resilience-admin.controller.js';
export {
  ResilienceEventStream,
  type PipelineStatistics,
  type ResilienceEventStreamOptions,
} from './resilience-event.stream.js';
