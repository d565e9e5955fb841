export { concurrencyLimiterRegistration } from './concurrency-limiter.registration.js';
