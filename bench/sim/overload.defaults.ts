import type { ScenarioOptions } from './overload.scenario.js';

/**
 * The scenario of docs/overload.md: 4 instances call a dependency that serves 200 requests per second
 * (8 servers, 40 ms each on average) behind a queue of 200; callers offer 140 per second and give up
 * after 1 s. From 5 s to 15 s the dependency loses half its servers; the run goes on to 30 s.
 */
export const OVERLOAD_SCENARIO: ScenarioOptions = {
  seed: 29,
  callers: 70,
  instances: 4,
  offeredRate: 140,
  callerDeadline: 1_000,
  attemptTimeout: 500,
  duration: 30_000,
  bucket: 250,
  recoveredRatio: 0.95,
  dependency: {
    servers: 8,
    queueLimit: 200,
    serviceFixed: 20,
    serviceRandomMean: 20,
    trigger: { kind: 'capacity', factor: 0.5, start: 5_000, duration: 10_000 },
  },
};
