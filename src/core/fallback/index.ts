export { type FallbackArguments, type FallbackStrategyOptions } from './fallback.options.js';
export { fallbackRegistration } from './fallback.registration.js';
