import { describe, expect, it } from '@jest/globals';
import {
  ConcurrencyLimiter,
  parseDuration,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  type PipelineConfig,
} from '../../../src/core.entry.js';

/** The configuration the registry keeps for `config` (after conversion), or the problems it reports. */
function converted(config: unknown): PipelineConfig | { path: string; value: unknown; rule: string }[] {
  try {
    const registry = new ResiliencePipelineRegistry({ pipelines: { p: config as PipelineConfig } });
    return registry.getPipelineConfig('p')!;
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceValidationError);
    return (error as ResilienceValidationError).issues.map(({ path, value, rule }) => ({ path, value, rule }));
  }
}

describe('parseDuration edge cases', () => {
  it.each([
    ['23:59:59', 86_399_000],
    ['00:59:00', 3_540_000],
    ['00:00:01.5', 1_500],
    ['-00:00:30', -30_000],
    ['2.00:00:00.0000001', 172_800_000.0001],
    ['P1DT2H', 93_600_000],
    ['PT1.5S', 1_500],
    ['pt2m', 120_000],
    ['-PT30S', -30_000],
    ['P2D', 172_800_000],
    ['2S', 2_000],
    ['1.5M', 90_000],
    ['2 s', 2_000],
    ['+2s', 2_000],
    ['.5s', 500],
    ['1e3', 1_000],
    ['2.5e1ms', undefined],
    ['  250ms', 250],
  ])('reads %j as %p', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['00:00:60', '24:00:00', '00:60:00', 'PT', 'P1H', '1w', '--1s', 's', '1:2:3', '00:00:00.12345678'])(
    'does not read %j',
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );

  it('takes a number as it is, and nothing but numbers and strings', () => {
    expect(parseDuration(1_234)).toBe(1_234);
    expect(parseDuration(-5)).toBe(-5);
    for (const value of [true, null, undefined, {}, ['1s'], 1n]) expect(parseDuration(value)).toBeUndefined();
  });
});

describe('conversion of configuration values', () => {
  it('converts numbers, durations and booleans at the options that take them', () => {
    expect(
      converted({
        retry: {
          maxRetryAttempts: ' 3 ',
          delay: '1s',
          maxDelay: 'PT2S',
          useJitter: ' TRUE ',
          honorRetryAfter: 'False',
        },
        rateLimiter: { kind: 'token-bucket', tokenLimit: '10', tokensPerPeriod: '+2', replenishmentPeriod: '1.5s' },
      }),
    ).toEqual({
      retry: { maxRetryAttempts: 3, delay: 1_000, maxDelay: 2_000, useJitter: true, honorRetryAfter: false },
      rateLimiter: { kind: 'token-bucket', tokenLimit: 10, tokensPerPeriod: 2, replenishmentPeriod: 1_500 },
    });
  });

  it('converts inside the list form and inside arrays of limits', () => {
    expect(
      converted({
        strategies: [
          {
            type: 'rateLimiter',
            limits: [{ kind: 'sliding-window', permitLimit: '5', window: '1m', segmentsPerWindow: '6' }],
          },
          { type: 'timeout', timeout: '00:00:02' },
        ],
      }),
    ).toEqual({
      strategies: [
        {
          type: 'rateLimiter',
          limits: [{ kind: 'sliding-window', permitLimit: 5, window: 60_000, segmentsPerWindow: 6 }],
        },
        { type: 'timeout', timeout: 2_000 },
      ],
    });
  });

  it.each([
    ['Infinity', Infinity],
    ['inf', Infinity],
    ['+INF', Infinity],
    [' infinity ', Infinity],
  ])('reads %j as an unbounded count', (text, value) => {
    expect(converted({ retry: { maxRetryAttempts: text } })).toEqual({ retry: { maxRetryAttempts: value } });
  });

  it('leaves strings that say nothing clear, so validation names them with their path', () => {
    expect(converted({ retry: { maxRetryAttempts: '-inf', useJitter: 'yes', delay: 'later' } })).toEqual([
      { path: 'pipelines.p.retry.maxRetryAttempts', value: '-inf', rule: 'must be an integer >= 0' },
      expect.objectContaining({ path: 'pipelines.p.retry.delay', value: 'later' }),
      { path: 'pipelines.p.retry.useJitter', value: 'yes', rule: 'must be a boolean' },
    ]);
    for (const text of ['infinite', 'max inf', 'inf.']) {
      expect(converted({ retry: { maxRetryAttempts: text } })).toEqual([
        expect.objectContaining({ path: 'pipelines.p.retry.maxRetryAttempts', value: text }),
      ]);
    }
    expect(converted({ retry: { maxRetryAttempts: '3x' } })).toEqual([
      expect.objectContaining({ path: 'pipelines.p.retry.maxRetryAttempts', value: '3x' }),
    ]);
  });

  it('converts nothing else: other strings, user data and names stay as given', () => {
    expect(
      converted({
        retry: { backoffType: 'constant', name: '42' },
        circuitBreaker: { kind: 'consecutive', circuitKey: '7', name: 'true' },
        fallback: { fallbackValue: { delay: '2s', enabled: 'true', count: '3' } },
      }),
    ).toEqual({
      retry: { backoffType: 'constant', name: '42' },
      circuitBreaker: { kind: 'consecutive', circuitKey: '7', name: 'true' },
      fallback: { fallbackValue: { delay: '2s', enabled: 'true', count: '3' } },
    });
    // "false" at an option that is not a boolean is reported as the string it is.
    expect(converted({ retry: { backoffType: 'false' } })).toEqual([
      expect.objectContaining({ path: 'pipelines.p.retry.backoffType', value: 'false' }),
    ]);
  });

  it('reads the shorthand sections given as strings, and names the long form when unreadable', () => {
    expect(converted({ timeout: '2s', totalTimeout: 'PT1M', concurrencyLimiter: ' 3 ' })).toEqual({
      timeout: 2_000,
      totalTimeout: 60_000,
      concurrencyLimiter: 3,
    });
    expect(converted({ timeout: 1_000, concurrencyLimiter: 2 })).toEqual({ timeout: 1_000, concurrencyLimiter: 2 });
    const problems = converted({ timeout: 'soon', concurrencyLimiter: 'many', totalTimeout: '1 parsec' });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'pipelines.p.totalTimeout.timeout', value: '1 parsec' }),
        expect.objectContaining({ path: 'pipelines.p.timeout.timeout', value: 'soon' }),
        expect.objectContaining({ path: 'pipelines.p.concurrencyLimiter.permitLimit', value: 'many' }),
      ]),
    );
    expect(problems).toHaveLength(3);
    // The limiter's shorthand is a count: a duration is no count.
    expect(converted({ concurrencyLimiter: '2s' })).toEqual([
      expect.objectContaining({ path: 'pipelines.p.concurrencyLimiter.permitLimit', value: '2s' }),
    ]);
  });

  it('keeps an option given as undefined as not given', () => {
    expect(converted({ retry: { maxRetryAttempts: '2', delay: undefined } })).toEqual({
      retry: { maxRetryAttempts: 2, delay: undefined },
    });
  });

  it('copies plain objects (also without a prototype) and keeps everything else by identity', () => {
    const limiter = new ConcurrencyLimiter({ permitLimit: 2 });
    const shouldHandle = () => true;
    const retry = Object.assign(Object.create(null) as Record<string, unknown>, { delay: '5ms', shouldHandle });
    const given = { retry, rateLimiter: { limiter } };
    const config = converted(given) as Record<string, Record<string, unknown>>;
    expect(config.retry).toEqual({ delay: 5, shouldHandle });
    expect(config.retry.shouldHandle).toBe(shouldHandle);
    expect(config.rateLimiter.limiter).toBe(limiter);
    expect(retry.delay).toBe('5ms'); // the input is not changed
  });

  it('keeps a configuration that is not an object as given, for validation to report', () => {
    expect(converted('2s')).toEqual([
      { path: 'pipelines.p', value: '2s', rule: 'must be an object of strategy sections' },
    ]);
    expect(converted([{ timeout: '2s' }])).toEqual([
      { path: 'pipelines.p', value: [{ timeout: '2s' }], rule: 'must be an object of strategy sections' },
    ]);
  });
});
