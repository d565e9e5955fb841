import { describe, expect, it } from '@jest/globals';
import { ResilienceContext } from '../../../src/index.js';
import { parseGrpcTimeout, parseRequestBudget, readRequestBudget, remainingBudget } from '../../../src/nest/index.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

describe('reading and writing budgets', () => {
  it("parses gRPC's timeout syntax", () => {
    expect(parseGrpcTimeout('100m')).toBe(100);
    expect(parseGrpcTimeout('2S')).toBe(2_000);
    expect(parseGrpcTimeout('1M')).toBe(60_000);
    expect(parseGrpcTimeout('1H')).toBe(3_600_000);
    expect(parseGrpcTimeout('500u')).toBe(0.5);
    expect(parseGrpcTimeout('2000000n')).toBe(2);
    for (const bad of ['100', '123456789m', '1s', '-1m', '1.5S', '', 5, undefined]) {
      expect(parseGrpcTimeout(bad)).toBeUndefined();
    }
  });

  it('reads a budget in milliseconds or in gRPC syntax; a negative one is spent', () => {
    expect(parseRequestBudget(250)).toBe(250);
    expect(parseRequestBudget('250')).toBe(250);
    expect(parseRequestBudget(' 12.5 ')).toBe(12.5);
    expect(parseRequestBudget('-20')).toBe(0);
    expect(parseRequestBudget('3S')).toBe(3_000);
    expect(parseRequestBudget(['40', '50'])).toBe(40);
    for (const bad of ['soon', Infinity, Number.NaN, null, {}]) expect(parseRequestBudget(bad)).toBeUndefined();
  });

  it('takes the smaller budget of the two headers', () => {
    expect(readRequestBudget({ 'x-request-deadline-ms': '900', 'grpc-timeout': '300m' })).toBe(300);
    expect(readRequestBudget({ 'x-request-deadline-ms': '200', 'grpc-timeout': '1S' })).toBe(200);
    expect(readRequestBudget({ 'grpc-timeout': '1S' })).toBe(1_000);
    expect(readRequestBudget({ accept: '*/*' })).toBeUndefined();
    expect(readRequestBudget(undefined)).toBeUndefined();
  });

  it('gives the whole milliseconds left before a context deadline, never negative', () => {
    const time = new FakeTimeProvider(1_000);
    expect(remainingBudget(new ResilienceContext(), time)).toBeUndefined();
    expect(remainingBudget(new ResilienceContext({ deadline: 1_250.7 }), time)).toBe(250);
    expect(remainingBudget(new ResilienceContext({ deadline: 900 }), time)).toBe(0);
  });
});
