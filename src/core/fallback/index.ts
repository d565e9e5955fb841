import './fallback.shortcuts.js';

export { type FallbackArguments, type FallbackStrategyOptions } from './fallback.options.js';
export { fallbackRegistration, fallbackStrategy, type FallbackConfig } from './fallback.descriptor.js';
