export * from './fallback.options.js';
