import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BrokenCircuitError, CircuitBreaker, Retry, ResilienceModule, type ResilienceEvent } from '../../src/index.js';
import type { StoreOutageMode } from '../../src/redis/index.js';
import type { RedisStoreConfig } from '../../src/nest/options/resilience-module-options.interface.js';
import type { TimeProvider } from '../../src/core.entry.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { uniquePrefix } from './redis-test.utils.js';
import { waitFor } from './redis-topology.utils.js';

/*
 * The fleet scenario, shared by every Redis topology (one server, a cluster, a Sentinel-managed primary):
 * three Nest application instances share one circuit through the module's `store: { redis }`.
 */

/** Where the instances find Redis: the connection part of `store.redis`. */
export type RedisWhere = Pick<RedisStoreConfig, 'url' | 'cluster' | 'sentinels' | 'name' | 'client'>;

/** The dependency every instance calls; it counts the requests that reach it, fleet-wide. */
export class Dependency {
  calls = 0;
  failing = true;
  /** While set, calls that reach the dependency wait for it (a slow dependency). */
  gate: Promise<void> | undefined;

  async call(): Promise<string> {
    this.calls++;
    if (this.gate) await this.gate;
    if (this.failing) throw new Error('dependency down');
    return 'ok';
  }
}

export const dependency = new Dependency();

@Injectable()
export class InventoryService {
  @Retry({ maxRetryAttempts: 0 })
  @CircuitBreaker('inventory')
  check(): Promise<string> {
    return dependency.call();
  }
}

export async function startInstance(options: {
  redis: RedisWhere;
  keyPrefix: string;
  time: TimeProvider;
  retryInterval?: number;
  operationTimeout?: number;
  logger?: LoggerService;
  outageMode?: StoreOutageMode;
  events?: ResilienceEvent[];
}): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        timeProvider: options.time,
        telemetryListeners: options.events ? [{ write: (e) => options.events!.push(e) }] : [],
        store: {
          redis: {
            ...options.redis,
            keyPrefix: options.keyPrefix,
            outageMode: options.outageMode,
            retryInterval: options.retryInterval ?? 1_000,
            // Generous: these tests are about what the store decides, not how fast a loaded machine answers.
            operationTimeout: options.operationTimeout ?? 1_000,
          },
        },
        pipelines: {
          inventory: {
            circuitBreaker: {
              kind: 'consecutive',
              failureThreshold: 5,
              breakDuration: 30_000,
              permittedCallsInHalfOpen: 1,
            },
          },
        },
      }),
    ],
    providers: [InventoryService],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: options.logger ?? false });
  await app.init();
  return app;
}

export async function settle(promises: Promise<unknown>[]): Promise<string[]> {
  return Promise.all(
    promises.map((p) =>
      p.then(
        () => 'ok',
        (e: unknown) => (e instanceof BrokenCircuitError ? 'broken' : 'failed'),
      ),
    ),
  );
}

export function describeFleet(title: string, where: () => RedisWhere): void {
  describe(title, () => {
    const apps: INestApplication[] = [];
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((a) => a.close()));
      dependency.calls = 0;
      dependency.failing = true;
    });

    it('opens the circuit fleet-wide after the threshold, and admits one probe per break across all instances', async () => {
      const time = new FakeTimeProvider(Date.now());
      const keyPrefix = uniquePrefix('fleet');
      for (let i = 0; i < 3; i++) apps.push(await startInstance({ redis: where(), keyPrefix, time }));
      const services = apps.map((a) => a.get(InventoryService));

      // Round robin: five failures in a row, spread over the three instances, open the shared circuit.
      for (let i = 0; i < 5; i++) await services[i % 3].check().catch(() => undefined);
      expect(dependency.calls).toBe(5);
      const afterOpening = await settle(Array.from({ length: 30 }, (_, i) => services[i % 3].check()));
      expect(afterOpening.every((r) => r === 'broken')).toBe(true);
      expect(dependency.calls).toBe(5);

      // After the break, 60 concurrent calls from all instances: exactly one probe reaches the dependency.
      // The probe is held in flight until every other call has been decided.
      time.advance(30_000);
      dependency.failing = false;
      let release!: () => void;
      dependency.gate = new Promise<void>((resolve) => (release = resolve));
      let decided = 0;
      const calls = Array.from({ length: 60 }, (_, i) =>
        services[i % 3].check().finally(() => {
          decided++;
        }),
      );
      await waitFor('59 calls decided while the probe is in flight', () => decided === 59);
      dependency.gate = undefined;
      release();
      const probing = await settle(calls);
      expect(dependency.calls).toBe(6);
      expect(probing.filter((r) => r === 'ok')).toHaveLength(1);
      expect(probing.filter((r) => r === 'broken')).toHaveLength(59);
      // The probe succeeded: closed everywhere.
      expect(await settle(services.map((s) => s.check()))).toEqual(['ok', 'ok', 'ok']);
    });

    it('keeps the circuit open across a restart of an instance', async () => {
      const time = new FakeTimeProvider(Date.now());
      const keyPrefix = uniquePrefix('restart');
      const first = await startInstance({ redis: where(), keyPrefix, time });
      for (let i = 0; i < 5; i++)
        await first
          .get(InventoryService)
          .check()
          .catch(() => undefined);
      await first.close();
      apps.push(await startInstance({ redis: where(), keyPrefix, time }));
      await expect(apps[0].get(InventoryService).check()).rejects.toBeInstanceOf(BrokenCircuitError);
      expect(dependency.calls).toBe(5);
    });
  });
}
