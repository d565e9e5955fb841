import './timeout.shortcuts.js';

export {
  DEFAULT_TIMEOUT,
  type OnTimeoutArguments,
  type TimeoutGeneratorArguments,
  type TimeoutMode,
  type TimeoutStrategyOptions,
} from './timeout.options.js';
export { timeoutRegistration, timeoutStrategy, type TimeoutConfig } from './timeout.descriptor.js';
