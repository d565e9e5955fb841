import { beforeAll, describe, expect, it } from '@jest/globals';
import { POLICIES, pipelinePolicy, type PipelinePolicy } from '../../bench/sim/overload.policies.js';
import { runScenario, type PolicyResult, type ScenarioOptions } from '../../bench/sim/overload.scenario.js';

/** The scenario of docs/overload.md at half the size: a 100 req/s dependency loses half its servers for 4 s. */
const TINY: ScenarioOptions = {
  seed: 7,
  callers: 20,
  instances: 2,
  offeredRate: 70,
  callerDeadline: 1_000,
  attemptTimeout: 500,
  duration: 14_000,
  bucket: 250,
  recoveredRatio: 0.95,
  dependency: {
    servers: 4,
    queueLimit: 100,
    serviceFixed: 20,
    serviceRandomMean: 20,
    trigger: { kind: 'capacity', factor: 0.5, start: 2_000, duration: 4_000 },
  },
};

function policy(name: string): PipelinePolicy {
  const found = POLICIES.find((p) => p.name === name);
  if (!found) throw new Error(`no policy ${name}`);
  return found;
}

describe('the overload simulation (real strategies on a fake clock)', () => {
  let plain: PolicyResult;
  let protectedPolicy: PolicyResult;

  beforeAll(async () => {
    plain = await runScenario(pipelinePolicy(policy('plain retries (3×, exponential)')), TINY);
    protectedPolicy = await runScenario(pipelinePolicy(policy('+ deadlines')), TINY);
  });

  it('plain retries amplify the load more than twofold during the trigger and never recover (metastable)', () => {
    expect(plain.amplification).toBeGreaterThan(2);
    expect(plain.recovery).toBeUndefined();
  });

  it('the full policy keeps the load at the offered rate, serves 90 % of the capacity and recovers within 1 s', () => {
    expect(protectedPolicy.amplification).toBeLessThanOrEqual(1.1);
    expect(protectedPolicy.goodputShare).toBeGreaterThanOrEqual(0.9);
    expect(protectedPolicy.goodput).toBeGreaterThan(2 * plain.goodput);
    expect(protectedPolicy.recovery).toBeDefined();
    expect(protectedPolicy.recovery).toBeLessThanOrEqual(1_000);
  });

  it('without retries the dependency sees one attempt per call, at the offered rate', async () => {
    const result = await runScenario(pipelinePolicy(policy('no protection')), TINY);
    const offered = (result.timeline.offered.reduce((a, b) => a + b, 0) * TINY.bucket) / TINY.duration;

    expect(result.amplification).toBe(1);
    expect(offered).toBeGreaterThan(0.8 * TINY.offeredRate);
    expect(offered).toBeLessThan(1.2 * TINY.offeredRate);
  });
});
