import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  CIRCUIT_BREAKER_STATE_STORE,
  Fallback,
  InMemoryCircuitBreakerStateStore,
  RateLimit,
  RESILIENCE_TIME_PROVIDER,
  ResilienceModule,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  Retry,
  AttemptTimeout,
  TimeoutRejectedError,
} from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { ResilienceExplorer } from '../../src/nest/module/resilience.explorer.js';

@Injectable()
class Flaky {
  calls = 0;

  @Retry({ maxRetryAttempts: 2, delay: 500, backoffType: 'constant', useJitter: false })
  async fetch(): Promise<string> {
    if (++this.calls < 3) throw new Error('flaky');
    return 'ok';
  }

  @AttemptTimeout({ timeout: 1_000, mode: 'aggressive' }) // the method ignores its signal
  hang(): Promise<string> {
    return new Promise(() => undefined);
  }

  @RateLimit({ kind: 'fixed-window', permitLimit: 1, window: 10_000 })
  async limited(): Promise<string> {
    return 'admitted';
  }

  @RateLimit('per-minute')
  async sharedLimit(): Promise<string> {
    return 'admitted';
  }
}

@Injectable()
class Misconfigured {
  calls = 0;

  @Fallback('cahced')
  async read(): Promise<string> {
    this.calls++;
    throw new Error('down');
  }

  cached(): string {
    return 'cached';
  }
}

function compile(providers: unknown[], time?: FakeTimeProvider) {
  let builder = Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        pipelines: { 'per-minute': { rateLimiter: { kind: 'fixed-window', permitLimit: 1, window: 60_000 } } },
      }),
    ],
    providers: providers as never[],
  });
  if (time) builder = builder.overrideProvider(RESILIENCE_TIME_PROVIDER).useValue(time);
  return builder.compile();
}

describe('a testing module: decorators take effect when it initialises', () => {
  it('runs decorated methods bare while the module is only compiled, and protects them once init() ran', async () => {
    const time = new FakeTimeProvider();
    const moduleRef = await compile([Flaky], time);
    const flaky = moduleRef.get(Flaky);
    await expect(flaky.fetch()).rejects.toThrow('flaky'); // compiled, not initialised: the bare method
    expect(flaky.calls).toBe(1);
    await moduleRef.init();
    const result = flaky.fetch();
    await time.advanceAsync(500);
    await expect(result).resolves.toBe('ok'); // one retry on the fake clock
    expect(flaky.calls).toBe(3);
    await moduleRef.close();
  });

  it('binds each instance once: a second init hook keeps the same pipelines (and their state)', async () => {
    const moduleRef = await compile([Flaky]);
    await moduleRef.init();
    const flaky = moduleRef.get(Flaky);
    await expect(flaky.limited()).resolves.toBe('admitted');
    const explorer = moduleRef.get(ResilienceExplorer);
    explorer.onModuleInit(); // as a hybrid application's startAllMicroservices() calls it again
    await expect(flaky.limited()).rejects.toMatchObject({ name: 'RateLimiterRejectedError' });
    await moduleRef.close();
  });

  it('fails init() with the start-up error, and the method is never run through a half-bound pipeline', async () => {
    const moduleRef = await compile([Misconfigured]);
    const error = await moduleRef.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as Error).message).toContain('Misconfigured.read.@Fallback: "cahced" is not a method');
    expect(Object.getOwnPropertyNames(moduleRef.get(Misconfigured))).not.toContain('read');
    await moduleRef.close();
  });

  it('leaves an instance made with new outside Nest as it is', async () => {
    const moduleRef = await compile([Flaky]);
    await moduleRef.init();
    const plain = new Flaky(); // the class is a provider of an initialised module, but this instance is not Nest's
    await expect(plain.fetch()).rejects.toThrow('flaky');
    expect(plain.calls).toBe(1);
    await moduleRef.close();
  });
});

describe('overriding RESILIENCE_TIME_PROVIDER', () => {
  it('gives the registry, the decorators, the timeouts and the limiters the overriding clock', async () => {
    const time = new FakeTimeProvider();
    const moduleRef = await compile([Flaky], time);
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const registry = app.get(ResiliencePipelineRegistry);
    expect(registry.timeProvider).toBe(time);
    expect(app.get(RESILIENCE_TIME_PROVIDER)).toBe(time);

    const flaky = app.get(Flaky);
    const hung = flaky.hang().catch((e: unknown) => e);
    await time.advanceAsync(1_000);
    expect(await hung).toBeInstanceOf(TimeoutRejectedError);

    await expect(flaky.limited()).resolves.toBe('admitted');
    await expect(flaky.limited()).rejects.toMatchObject({ name: 'RateLimiterRejectedError' });
    time.advance(10_000); // the window passes on the fake clock only
    await expect(flaky.limited()).resolves.toBe('admitted');

    await expect(flaky.sharedLimit()).resolves.toBe('admitted');
    await expect(registry.getPipeline('per-minute').execute(() => 'x')).rejects.toMatchObject({
      name: 'RateLimiterRejectedError',
      retryAfter: 60_000,
    });
    time.advance(60_000);
    await expect(flaky.sharedLimit()).resolves.toBe('admitted');
    await app.close();
  });

  it('lets CIRCUIT_BREAKER_STATE_STORE be overridden the same way', async () => {
    const store = new InMemoryCircuitBreakerStateStore();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          pipelines: { deps: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1 } } },
        }),
      ],
    })
      .overrideProvider(CIRCUIT_BREAKER_STATE_STORE)
      .useValue(store)
      .compile();
    const registry = moduleRef.get(ResiliencePipelineRegistry);
    expect(registry.stateStore).toBe(store);
    await registry
      .getPipeline('deps')
      .execute(() => Promise.reject(new Error('down')))
      .catch(() => undefined);
    expect([...store.keys()]).toEqual(['deps/circuit-breaker']);
    await moduleRef.close();
  });
});
