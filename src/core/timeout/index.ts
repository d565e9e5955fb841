export {
  DEFAULT_TIMEOUT,
  type OnTimeoutArguments,
  type TimeoutGeneratorArguments,
  type TimeoutMode,
  type TimeoutStrategyOptions,
} from './timeout.options.js';
export { timeoutRegistration } from './timeout.registration.js';
