import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { defer, firstValueFrom, isObservable, Observable, of, throwError, toArray } from 'rxjs';
import type { Observable as ObservableType } from 'rxjs';
import request from 'supertest';
import { ResilienceModule, Retry } from '../../../src/index.js';

/** A cold Observable that fails its first subscription and emits 1, 2, 3 on the next. */
function flakyStream(counter: { subscriptions: number }) {
  return defer(() => (++counter.subscriptions === 1 ? throwError(() => new Error('blip')) : of(1, 2, 3)));
}

@Injectable()
class TypeOnlyImport {
  readonly counter = { subscriptions: 0 };

  @Retry({ maxRetryAttempts: 2, delay: 0 })
  stream(): ObservableType<number> {
    return flakyStream(this.counter);
  }
}

@Injectable()
class InferredReturn {
  readonly counter = { subscriptions: 0 };

  @Retry({ maxRetryAttempts: 2, delay: 0 })
  stream() {
    return flakyStream(this.counter);
  }
}

/** Written as plain JavaScript would be: decorators applied by hand, no type metadata at all. */
class PlainScript {
  counter = { subscriptions: 0 };
  calls = 0;

  stream() {
    return flakyStream(this.counter);
  }

  async total(): Promise<number> {
    if (++this.calls === 1) throw new Error('blip');
    return 6;
  }
}
for (const method of ['stream', 'total'] as const) {
  const descriptor = Object.getOwnPropertyDescriptor(PlainScript.prototype, method)!;
  Retry({ maxRetryAttempts: 2, delay: 0 })(PlainScript.prototype, method, descriptor);
  Object.defineProperty(PlainScript.prototype, method, descriptor);
  expect(Reflect.getMetadata('design:returntype', PlainScript.prototype, method)).toBeUndefined();
}
Injectable()(PlainScript);

/** Undeclared Observable that never completes on its own; records its teardown. */
@Injectable()
class Ticker {
  tornDown = 0;

  @Retry({ maxRetryAttempts: 1, delay: 0 })
  ticks() {
    return new Observable<number>((subscriber) => {
      subscriber.next(1);
      return () => this.tornDown++;
    });
  }

  @Retry({ maxRetryAttempts: 1, delay: 0 })
  numbers() {
    return of(4, 5, 6);
  }
}

@Controller('numbers')
class NumbersController {
  readonly counter = { subscriptions: 0 };

  @Get()
  @Retry({ maxRetryAttempts: 2, delay: 0 })
  list() {
    return flakyStream(this.counter).pipe(toArray());
  }
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start() {
  const moduleRef = await Test.createTestingModule({
    imports: [ResilienceModule.forRoot({})],
    providers: [TypeOnlyImport, InferredReturn, PlainScript, Ticker],
    controllers: [NumbersController],
  }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('Observable methods are detected from what they return', () => {
  for (const type of [TypeOnlyImport, InferredReturn, PlainScript]) {
    it(`returns an Observable that emits each value, retried per subscription (${type.name})`, async () => {
      const nest = await start();
      const service = nest.get<TypeOnlyImport>(type);
      const first = service.stream();
      expect(isObservable(first)).toBe(true);
      await expect(firstValueFrom(first.pipe(toArray()))).resolves.toEqual([1, 2, 3]);
      expect(service.counter.subscriptions).toBe(2);

      // Once known, later calls are cold: nothing runs until somebody subscribes.
      const second = service.stream();
      expect(isObservable(second)).toBe(true);
      expect(service.counter.subscriptions).toBe(2);
      await expect(firstValueFrom(second.pipe(toArray()))).resolves.toEqual([1, 2, 3]);
      expect(service.counter.subscriptions).toBe(3);
    });
  }

  it('cancels the running first call when its subscriber unsubscribes', async () => {
    const nest = await start();
    const ticker = nest.get(Ticker);
    const seen: number[] = [];
    const subscription = ticker.ticks().subscribe((n) => seen.push(n));
    await new Promise((r) => setImmediate(r));
    subscription.unsubscribe();
    expect(ticker.tornDown).toBe(1);
    // The next call is known to be an Observable: cold until subscribed, torn down on unsubscribe.
    const next = ticker.ticks().subscribe();
    await new Promise((r) => setImmediate(r));
    next.unsubscribe();
    expect(ticker.tornDown).toBe(2);
  });

  it('can be awaited on the first call: the last value', async () => {
    const nest = await start();
    await expect(nest.get(Ticker).numbers()).resolves.toBe(6);
  });

  it('still returns a promise from a method without metadata that returns one', async () => {
    const nest = await start();
    const service = nest.get(PlainScript);
    const result = service.total();
    await expect(result).resolves.toBe(6);
    expect(service.calls).toBe(2);
    await expect(service.total()).resolves.toBe(6);
    expect(service.total()).toBeInstanceOf(Promise);
  });

  it('answers a route whose handler returns an Observable without declaring it', async () => {
    const nest = await start();
    await request(nest.getHttpServer())
      .get('/numbers')
      .expect(200)
      .expect((r) => expect(r.body).toEqual([1, 2, 3]));
    await request(nest.getHttpServer())
      .get('/numbers')
      .expect(200)
      .expect((r) => expect(r.body).toEqual([1, 2, 3]));
  });
});
