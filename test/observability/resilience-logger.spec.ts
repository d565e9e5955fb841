import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Injectable, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  ResilienceLoggerListener,
  ResilienceModule,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
} from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { RecordingListener } from '../utils/recording.listener.js';

/** Keeps every line with its level. */
class LinesLogger implements LoggerService {
  readonly lines: string[] = [];
  log(m: string): void {
    this.lines.push(`log ${m}`);
  }
  error(m: string): void {
    this.lines.push(`error ${m}`);
  }
  warn(m: string): void {
    this.lines.push(`warn ${m}`);
  }
  debug(m: string): void {
    this.lines.push(`debug ${m}`);
  }
  verbose(m: string): void {
    this.lines.push(`verbose ${m}`);
  }
}

class SecretError extends Error {
  override name = 'SecretError';
  readonly code = 'ECONNREFUSED';
}

const secret = () => Promise.reject(new SecretError('connect to https://user:hunter2@db.internal:5432 failed'));

describe('ResilienceLoggerListener', () => {
  it('writes one line per event at its default level: opened = error, half-open and retry = warn, closed = log, rejection = debug', async () => {
    const time = new FakeTimeProvider(0);
    const logger = new LinesLogger();
    const pipeline = new ResiliencePipelineBuilder({
      name: 'orders',
      timeProvider: time,
      telemetryListeners: [new ResilienceLoggerListener({ logger, timeProvider: time })],
    })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 2, breakDuration: 1_000 })
      .build();

    await pipeline.executeOutcome(secret, { operationKey: 'list' });
    await pipeline.executeOutcome(() => 'ok');
    time.advance(1_000);
    await pipeline.execute(() => 'ok');

    expect(logger.lines).toEqual([
      'warn OnRetry pipeline=orders strategy=retry operation=list attempt=0 delay=0ms outcome=ECONNREFUSED SecretError',
      'error OnCircuitOpened pipeline=orders strategy=circuit-breaker operation=list reason=failure-threshold breakDuration=1000ms failures=2/2 outcome=ECONNREFUSED SecretError',
      'error OnRetryGiveUp pipeline=orders strategy=retry operation=list attempt=1 reason=max-attempts outcome=ECONNREFUSED SecretError',
      'debug OnCircuitRejected pipeline=orders strategy=circuit-breaker state=open retryAfter=1000ms',
      'warn OnCircuitHalfOpened pipeline=orders strategy=circuit-breaker',
      'log OnCircuitClosed pipeline=orders strategy=circuit-breaker reason=probes-succeeded',
    ]);
  });

  it('prints durations in whole milliseconds, whatever the jitter or clock gives', async () => {
    const time = new FakeTimeProvider(0);
    const logger = new LinesLogger();
    const pipeline = new ResiliencePipelineBuilder({
      name: 'orders',
      timeProvider: time,
      random: () => 0.123456789,
      telemetryListeners: [new ResilienceLoggerListener({ logger, timeProvider: time })],
    })
      .addRetry({ maxRetryAttempts: 1, delay: 1_750, backoffType: 'exponential', useJitter: true })
      .build();

    const run = pipeline.executeOutcome(() => Promise.reject(new Error('down')));
    await time.advanceAsync(10_000);
    await run;
    const retry = logger.lines.find((line) => line.includes('OnRetry '));
    expect(retry).toMatch(/ delay=\d+ms /);
  });

  it('never writes error messages unless asked, and never the context properties', async () => {
    const logger = new LinesLogger();
    const quiet = new ResiliencePipelineBuilder({
      name: 'db',
      telemetryListeners: [new ResilienceLoggerListener({ logger })],
    })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    await quiet.executeOutcome(secret);
    expect(logger.lines.join('\n')).not.toMatch(/hunter2|db\.internal|connect to/);

    const verbose = new ResiliencePipelineBuilder({
      name: 'db',
      telemetryListeners: [new ResilienceLoggerListener({ logger, includeErrorMessages: true })],
    })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    await verbose.executeOutcome(secret);
    expect(logger.lines.at(-1)).toContain('connect to https://');
  });

  it('takes levels per event, including off, and per-call events when asked', async () => {
    const logger = new LinesLogger();
    const pipeline = new ResiliencePipelineBuilder({
      name: 'p',
      telemetryListeners: [
        new ResilienceLoggerListener({
          logger,
          levels: { OnRetry: 'debug', OnRetryGiveUp: false, PipelineExecuted: 'verbose' },
        }),
      ],
    })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    await pipeline.executeOutcome(() => Promise.reject(new TypeError('x')));
    expect(logger.lines.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([
      'debug OnRetry',
      'verbose PipelineExecuted',
    ]);
  });

  it('rate-limits per circuit and reports how many lines it dropped when the next period starts', async () => {
    const time = new FakeTimeProvider(0);
    const logger = new LinesLogger();
    const listener = new ResilienceLoggerListener({ logger, timeProvider: time, rateLimit: { events: 2, per: 1_000 } });
    const build = (name: string) =>
      new ResiliencePipelineBuilder({ name, timeProvider: time, telemetryListeners: [listener] })
        .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 })
        .build();
    const a = build('a');
    const b = build('b');
    await a.executeOutcome(() => Promise.reject(new Error('x'))); // opened: line 1
    for (let i = 0; i < 10; i++) await a.executeOutcome(() => 'ok'); // rejections: 1 logged, 9 dropped
    await b.executeOutcome(() => Promise.reject(new Error('x'))); // another circuit has its own budget
    expect(logger.lines).toHaveLength(3);
    expect(logger.lines[2]).toMatch(/^error OnCircuitOpened pipeline=b/);

    time.advance(1_000);
    await a.executeOutcome(() => 'ok');
    expect(logger.lines.slice(3)).toEqual([
      'warn 9 resilience event(s) of a/-/circuit-breaker were not logged (rate limit)',
      'debug OnCircuitRejected pipeline=a strategy=circuit-breaker state=open retryAfter=59000ms',
    ]);
  });

  it('rejects invalid options at start-up with every problem listed', () => {
    let error: unknown;
    try {
      new ResilienceLoggerListener({
        levels: { OnRetry: 'loud' as never, NoSuchEvent: 'log' } as never,
        rateLimit: { events: 0, per: -1 },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues.map((i) => i.path)).toEqual([
      'logging.levels.OnRetry',
      'logging.levels.NoSuchEvent',
      'logging.rateLimit.events',
      'logging.rateLimit.per',
    ]);
  });
});

@Injectable()
class Nothing {}

describe('ResilienceModule logging', () => {
  async function registryOf(options: Parameters<typeof ResilienceModule.forRoot>[0], logger: LoggerService) {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot(options)],
      providers: [Nothing],
    }).compile();
    moduleRef.useLogger(logger);
    const app = moduleRef.createNestApplication({ logger });
    await app.init();
    return { app, registry: app.get(ResiliencePipelineRegistry) };
  }

  it('logs through the Nest logger by default', async () => {
    const logger = new LinesLogger();
    const { app, registry } = await registryOf(
      { pipelines: { orders: { retry: { maxRetryAttempts: 1, delay: 0 } } } },
      logger,
    );
    await registry.getPipeline('orders').executeOutcome(() => Promise.reject(new Error('x')));
    expect(logger.lines.filter((l) => l.includes('OnRetry '))).toEqual([
      'warn OnRetry pipeline=orders strategy=retry attempt=0 delay=0ms outcome=Error',
    ]);
    await app.close();
  });

  it('is silent with logging: false, and then a pipeline without listeners reports nothing at all', async () => {
    const logger = new LinesLogger();
    const { app, registry } = await registryOf(
      { logging: false, pipelines: { orders: { retry: { maxRetryAttempts: 1, delay: 0 } } } },
      logger,
    );
    await registry.getPipeline('orders').executeOutcome(() => Promise.reject(new Error('x')));
    expect(logger.lines.filter((l) => l.includes('OnRetry'))).toEqual([]);
    await app.close();
  });

  it('keeps the user listeners next to the logger', async () => {
    const logger = new LinesLogger();
    const recording = new RecordingListener();
    const { app, registry } = await registryOf(
      {
        telemetryListeners: [recording],
        logging: { levels: { OnRetry: 'error' } },
        pipelines: { orders: { retry: { maxRetryAttempts: 1, delay: 0 } } },
      },
      logger,
    );
    await registry.getPipeline('orders').executeOutcome(() => Promise.reject(new Error('x')));
    expect(recording.names()).toContain('OnRetry');
    expect(logger.lines.filter((l) => l.includes('OnRetry '))).toEqual([
      'error OnRetry pipeline=orders strategy=retry attempt=0 delay=0ms outcome=Error',
    ]);
    await app.close();
  });
});
