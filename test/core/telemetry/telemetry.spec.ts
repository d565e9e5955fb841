import { describe, expect, it } from '@jest/globals';
import {
  outcomeFromError,
  outcomeFromValue,
  ResilienceContext,
  StrategyTelemetry,
  type ResilienceEvent,
} from '../../../src/core.entry.js';
import { describeOutcome, errorType } from '../../../src/core/telemetry/outcome-description.util.js';

const source = { pipelineName: 'orders', pipelineInstanceName: 'eu', strategyName: 'r', strategyType: 'retry' };

describe('StrategyTelemetry', () => {
  it('is disabled without listeners and then reports nothing', () => {
    const telemetry = new StrategyTelemetry(source, []);
    expect(telemetry.enabled).toBe(false);
    expect(() => telemetry.report('OnTimeout', 'error', new ResilienceContext(), { timeout: 5 })).not.toThrow();
  });

  it('hands every listener the same event, even after one throws', () => {
    const seen: ResilienceEvent[][] = [[], []];
    const telemetry = new StrategyTelemetry(source, [
      { write: (e) => void seen[0].push(e) },
      {
        write: () => {
          throw new Error('listener broke');
        },
      },
      { write: (e) => void seen[1].push(e) },
    ]);
    expect(telemetry.enabled).toBe(true);
    const context = new ResilienceContext();
    telemetry.report('OnTimeout', 'error', context, { timeout: 5 });
    expect(seen[0]).toEqual([
      { eventName: 'OnTimeout', severity: 'error', source, context, arguments: { timeout: 5 } },
    ]);
    expect(seen[1][0]).toBe(seen[0][0]);
  });
});

describe('describing an outcome', () => {
  it('names the type of an error: its name, its class, or typeof', () => {
    class Custom extends Error {}
    const unnamed = new Error('x');
    unnamed.name = '';
    expect(errorType(new TypeError('x'))).toBe('TypeError');
    expect(errorType(new Custom('x'))).toBe('Error');
    expect(errorType(Object.assign(new Custom('x'), { name: '' }))).toBe('Custom');
    expect(errorType(unnamed)).toBe('Error');
    expect(errorType(null)).toBe('null');
    expect(errorType(undefined)).toBe('undefined');
    expect(errorType('text')).toBe('string');
    expect(errorType(5)).toBe('number');
    expect(errorType({})).toBe('Object');
    expect(errorType(Object.create(null))).toBe('Object');
    expect(errorType(new (class Thing {})())).toBe('Thing');
    expect(errorType(new Map())).toBe('Map');
    const Anonymous = [class extends Error {}][0];
    expect(errorType(Object.assign(new Anonymous('x'), { name: '' }))).toBe('Error');
    expect(errorType(new [class {}][0]())).toBe('Object');
  });

  it('says ok, or the code, HTTP status and type, with the message only when asked', () => {
    expect(describeOutcome(outcomeFromValue(1), true)).toBe('ok');
    const error = Object.assign(new Error('db at 10.0.0.1 down'), { code: 'ECONNREFUSED', status: 503 });
    expect(describeOutcome(outcomeFromError(error), false)).toBe('ECONNREFUSED HTTP 503 Error');
    expect(describeOutcome(outcomeFromError(error), true)).toBe('ECONNREFUSED HTTP 503 Error "db at 10.0.0.1 down"');
    expect(describeOutcome(outcomeFromError(Object.assign(new Error(''), { code: 42 })), true)).toBe('42 Error');
    expect(describeOutcome(outcomeFromError({ code: true, response: { status: 429 } }), false)).toBe('HTTP 429 Object');
    expect(describeOutcome(outcomeFromError({ status: '500', response: { status: 502 } }), false)).toBe(
      'HTTP 502 Object',
    );
    expect(describeOutcome(outcomeFromError({ status: 'bad' }), false)).toBe('Object');
    expect(describeOutcome(outcomeFromError('text'), true)).toBe('string');
    expect(describeOutcome(outcomeFromError(undefined), true)).toBe('undefined');
    expect(describeOutcome(outcomeFromError(null), true)).toBe('null');
  });
});
