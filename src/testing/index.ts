export { FakeTimeProvider, flushPromises } from './fake-time.provider.js';
