import { describe, expect, it } from '@jest/globals';
import {
  describeResilienceEvent,
  formatEventFacts,
  resilienceEventDescriptor,
  type EventFact,
} from '../../../src/core.entry.js';

const attributes = (facts: readonly EventFact[]): Record<string, EventFact['value']> =>
  Object.fromEntries(facts.filter((f) => f.attribute !== undefined).map((f) => [f.attribute as string, f.value]));

describe('the figures of the adaptive strategies and of limiter rejections', () => {
  it('OnAdaptiveLimitChanged: the limit and the previous limit, logged at debug', () => {
    const facts = describeResilienceEvent('OnAdaptiveLimitChanged', {
      previousLimit: 20,
      limit: 24,
      rtt: 5,
      longRtt: 5,
    });
    expect(attributes(facts)).toEqual({ 'concurrency.limit': 24, 'concurrency.previous_limit': 20 });
    expect(formatEventFacts(facts)).toEqual(['limit=24', 'previousLimit=20']);
    expect(resilienceEventDescriptor('OnAdaptiveLimitChanged')).toMatchObject({
      severity: 'information',
      logAs: 'debug',
      changesState: true,
    });
  });

  it('OnAdaptiveThrottlingRejected: the reject probability and the accepts of the window', () => {
    const facts = describeResilienceEvent('OnAdaptiveThrottlingRejected', {
      rejectProbability: 0.25,
      requests: 10,
      accepts: 3,
    });
    expect(attributes(facts)).toEqual({ 'throttle.reject_probability': 0.25 });
    expect(formatEventFacts(facts)).toEqual(['rejectProbability=0.250', 'accepts=3/10']);
    expect(resilienceEventDescriptor('OnAdaptiveThrottlingRejected')).toMatchObject({
      severity: 'warning',
      logAs: 'debug',
    });
  });

  it('OnRateLimiterRejected: the reason is an attribute; log lines name it only for a shed call', () => {
    const shed = describeResilienceEvent('OnRateLimiterRejected', { retryAfter: undefined, reason: 'shed' });
    expect(attributes(shed)).toEqual({ 'rate_limiter.reason': 'shed' });
    expect(formatEventFacts(shed)).toEqual(['reason=shed']);
    const limit = describeResilienceEvent('OnRateLimiterRejected', { retryAfter: 1_000, reason: 'limit' });
    expect(attributes(limit)).toEqual({ 'rate_limiter.reason': 'limit', 'retry.after': 1_000 });
    expect(formatEventFacts(limit)).toEqual(['retryAfter=1000ms']);
  });
});
