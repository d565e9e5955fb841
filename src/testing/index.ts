/**
 * Test helpers: `FakeTimeProvider` drives every strategy's time. No dependencies.
 *
 * @module
 */
export { FakeTimeProvider, flushPromises } from './fake-time.provider.js';
