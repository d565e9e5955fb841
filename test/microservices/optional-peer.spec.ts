import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { ResiliencePipelineRegistry, ResilienceValidationError } from '../../src/core.entry.js';
import { ResilientClients } from '../../src/nest/microservices/index.js';

/** Every source file reachable from `entry` through relative imports (type-only imports included). */
function reachable(entry: string): Map<string, string> {
  const files = new Map<string, string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    const source = readFileSync(file, 'utf8');
    files.set(file, source);
    for (const [, spec] of source.matchAll(/(?:import|export)[^'"]*?from\s+'([^']+)'/g)) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
    }
  };
  visit(resolve(entry));
  return files;
}

describe('@nestjs/microservices stays an optional peer', () => {
  it.each(['src/index.ts', 'src/nest/index.ts', 'src/core/index.ts'])('%s never reaches it', (entry) => {
    const offenders = [...reachable(entry)]
      .filter(([, source]) => /from\s+'(@nestjs\/microservices|mqtt|@nats-io\/[^']+)'/.test(source))
      .map(([file]) => file);
    expect(offenders).toEqual([]);
  });

  it('the microservices entry is the one that does', () => {
    const files = reachable(join('src', 'nest', 'microservices', 'index.ts'));
    expect([...files.values()].some((source) => source.includes("from '@nestjs/microservices'"))).toBe(true);
  });
});

describe('ResilientClients.wrap', () => {
  it('validates like configuration and registers nothing when invalid', () => {
    const registry = new ResiliencePipelineRegistry();
    const proxy = ClientProxyFactory.create({ transport: Transport.TCP, options: { port: 1 } });
    const clients = new ResilientClients(registry);
    const before = registry.pipelineNames;
    let error: unknown;
    try {
      clients.wrap('orders', proxy, {
        pipeline: { attemptTimeout: 60_000 },
        replyTimeout: -1,
        patterns: { 'order.place': { pipeline: 'rpc-standard', idempotent: 'no' as never } },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues.map((i) => i.path).sort()).toEqual([
      'clients.orders.patterns.order.place.idempotent',
      'clients.orders.pipeline.attemptTimeout',
      'clients.orders.replyTimeout',
    ]);
    expect(registry.pipelineNames).toEqual(before);
    expect(clients.names).toEqual([]);
  });

  it('never sends a message that may not be repeated twice, whatever the pipeline retries', async () => {
    const registry = new ResiliencePipelineRegistry({
      pipelines: { greedy: { retry: { maxRetryAttempts: 2, delay: 0 } } }, // retries every error
    });
    const proxy = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port: 1 } });
    const orders = new ResilientClients(registry).wrap('orders', proxy, {
      pipeline: 'greedy',
      patterns: { 'order.place': { idempotent: false } },
    });
    try {
      await expect(lastValueFrom(orders.emit('order.placed', { id: 1 }))).rejects.toMatchObject({
        code: 'ECONNREFUSED',
      });
      expect(orders.metrics.attempts).toBe(1);
      await expect(lastValueFrom(orders.send('order.place', { id: 1 }))).rejects.toMatchObject({
        code: 'ECONNREFUSED',
      });
      expect(orders.metrics.attempts).toBe(2);
      await expect(lastValueFrom(orders.send('order.get', { id: 1 }))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      expect(orders.metrics.attempts).toBe(5);
    } finally {
      proxy.close();
      await registry.dispose();
    }
  });
});
