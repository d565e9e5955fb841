export * from './timeout.options.js';
