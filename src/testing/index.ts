/**
 * The test kit: `FakeTimeProvider` drives every strategy's time; `runWithFakeTime` settles a call by
 * moving that clock; `waitForCircuitState` waits for a circuit; `getPipelineDescriptor` describes a
 * pipeline for assertions; `flushPromises` lets pending continuations run; `FakeRedisStateStore` stands in
 * for the Redis circuit store. No dependencies.
 *
 * @module
 */
export { FakeTimeProvider, flushPromises } from './fake-time.provider.js';
export {
  runWithFakeTime,
  waitForCircuitState,
  type RunWithFakeTimeOptions,
  type WaitForCircuitStateOptions,
} from './fake-time.helpers.js';
export { getPipelineDescriptor, type PipelineDescriptor, type StrategyDescriptor } from './pipeline-descriptor.js';
export { FakeRedisStateStore, type FakeRedisStateStoreOptions } from './fake-redis-state.store.js';
