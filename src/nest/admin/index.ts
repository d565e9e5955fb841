export { ResilienceAdminModule } from './resilience-admin.module.js';
export type {
  DashboardAction,
  DashboardActionMethod,
  ResilienceAdminOptions,
  ResilienceDashboardOptions,
  ResilienceFleetOptions,
} from './resilience-admin.options.js';
export type { FleetCircuit, FleetInstance, FleetPipeline, FleetView } from './resilience-fleet.service.js';
export type { AdminPipelineDescription, AdminStrategyDescription } from './resilience-admin.controller.js';
export {
  ResilienceEventStream,
  type CircuitStateChange,
  type CircuitStateHistory,
  type OperationStatistics,
  type PipelineStatistics,
  type StatisticsSeries,
  type ResilienceEventStreamOptions,
} from './resilience-event.stream.js';
