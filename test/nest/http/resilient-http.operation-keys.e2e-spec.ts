import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Attributes } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ResilienceModule } from '../../../src/index.js';
import { getResilientHttpClientToken, ResilientHttpClient, ResilientHttpModule } from '../../../src/nest/http/index.js';
import { OpenTelemetryListener, RESILIENCE_METRICS } from '../../../src/opentelemetry/index.js';
import { LineLogger } from '../../utils/line.logger.js';
import { RecordingListener } from '../../utils/recording.listener.js';

/** A loopback server answering 200, or 503 for any path under `/down/`. */
async function startServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const status = req.url?.startsWith('/down/') ? 503 : 200;
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function stopServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/**
 * Real HTTP round trips: 1,000 of them are the point of the test, and take seconds on a busy machine.
 * An explicit budget, far above the ~10 s they take on a loaded 2-core machine.
 */
const LONG_RUN_BUDGET = 120_000;

/** Runs `tasks` with at most `concurrency` in flight. */
async function pool(tasks: readonly (() => Promise<unknown>)[], concurrency: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Text that must never reach telemetry: paths below the first segment, query strings, the secrets. */
const LEAKS = [/secret/i, /token/i, /\?/, /q=/, /\/users\/\d/, /\/down\/\d/, /\/orders\/\d/];
const leaksIn = (texts: Iterable<string>): string[] => [...texts].filter((t) => LEAKS.some((leak) => leak.test(t)));

describe('ResilientHttpClient operation keys, through a Nest app against a real server', () => {
  const CAP = 20;
  const recorder = new RecordingListener();
  const lines = new LineLogger();
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const otel = new OpenTelemetryListener({
    meterProvider,
    tracerProvider,
    maxOperationKeys: CAP,
    logger: new Logger('OpenTelemetry'),
  });
  let app: INestApplication;
  let catalog: ResilientHttpClient;
  let mirror: ResilientHttpClient;
  let main: { server: Server; url: string };
  let other: { server: Server; url: string };

  beforeAll(async () => {
    main = await startServer();
    other = await startServer();
    const pipeline = {
      retry: { maxRetryAttempts: 1, delay: 0, useJitter: false },
      circuitBreaker: { kind: 'consecutive' as const, failureThreshold: 100_000 },
    };
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          telemetryListeners: [recorder, otel],
          // Every call logs a line, failures and retries included, with the error messages.
          logging: { rateLimit: false, includeErrorMessages: true, levels: { PipelineExecuted: 'log' } },
        }),
        ResilientHttpModule.forFeature([
          { name: 'catalog', baseURL: main.url, pipeline },
          { name: 'mirror', hedging: { routing: { groups: [{ endpoints: [main.url] }] } } },
        ]),
      ],
    })
      .setLogger(lines)
      .compile();
    app = moduleRef.createNestApplication({ logger: lines });
    await app.init();
    catalog = app.get(getResilientHttpClientToken('catalog'));
    mirror = app.get(getResilientHttpClientToken('mirror'));
  }, LONG_RUN_BUDGET);

  afterAll(async () => {
    await app.close();
    await Promise.all([stopServer(main.server), stopServer(other.server)]);
    await meterProvider.shutdown();
    await tracerProvider.shutdown();
  });

  beforeEach(() => {
    recorder.events.length = 0;
    lines.lines.length = 0;
    spans.reset();
  });

  const operationKeys = (): Set<string> => new Set(recorder.events.map((e) => e.context.operationKey ?? '-'));

  /** Every metric point (the circuit gauge's included), with its instrument's name. */
  async function metricPoints(): Promise<{ name: string; attributes: Attributes }[]> {
    exporter.reset();
    await reader.forceFlush();
    return exporter
      .getMetrics()
      .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
      .flatMap((m: MetricData) => m.dataPoints.map((p) => ({ name: m.descriptor.name, attributes: p.attributes })));
  }

  /** The `operation.key` values of the metric points that have one (the circuit gauge has none). */
  const keysOf = (points: { attributes: Attributes }[]): Set<string> =>
    new Set(
      points.flatMap((p) => {
        const key = p.attributes['operation.key'];
        return typeof key === 'string' ? [key] : [];
      }),
    );

  it(
    '1,000 distinct URLs: few operation keys, metric series and log lines, none with a path, query or secret',
    async () => {
      const tasks = Array.from({ length: 1_000 }, (_, i) => {
        const query = { params: { q: `term ${i}` } };
        switch (i % 5) {
          case 0: // relative to the base URL, the token in the query string
            return () => catalog.get(`/users/${i}/orders?q=x${i}&token=secret${i}`);
          case 1: // absolute, to another host, with axios params
            return () => catalog.get(`${other.url}/orders/${i}?token=secret-${i}`, query);
          case 2: // with its route template
            return () =>
              catalog.get(`/users/${i}/orders?token=secret${i}`, { ...query, routeTemplate: '/users/{id}/orders' });
          case 3: // a POST
            return () => catalog.post(`/orders/${i}?token=secret${i}`, { n: i });
          default: // a failing one: retried once, then it gives up (warn and error lines)
            return () => catalog.get(`/down/${i}?token=secret${i}`).catch((error: unknown) => error);
        }
      });
      await pool(tasks, 8);

      const port = (url: string) => new URL(url).host;
      expect([...operationKeys()].sort()).toEqual(
        [
          `catalog GET ${port(main.url)}`,
          `catalog GET ${port(other.url)}`,
          'catalog GET /users/{id}/orders',
          `catalog POST ${port(main.url)}`,
        ].sort(),
      );

      const points = await metricPoints();
      expect([...keysOf(points)].sort()).toEqual([...operationKeys()].sort());
      expect(points.length).toBeLessThan(60); // a handful of series per key, not one per URL
      expect(leaksIn(points.map((p) => JSON.stringify(p.attributes)))).toEqual([]);
      expect(points.some((p) => p.name === RESILIENCE_METRICS.strategyEvents)).toBe(true);

      const finished = spans.getFinishedSpans();
      expect(finished).toHaveLength(1_000);
      expect(new Set(finished.map((s) => s.name))).toEqual(new Set(['resilience http:catalog']));
      expect(leaksIn(finished.map((s) => JSON.stringify(s.attributes)))).toEqual([]);

      const texts = lines.lines.map((l) => l.text);
      expect(lines.lines.filter((l) => l.level === 'log').length).toBeGreaterThanOrEqual(1_000);
      expect(lines.lines.some((l) => l.level === 'warn' && l.text.startsWith('OnRetry '))).toBe(true);
      expect(lines.lines.some((l) => l.level === 'error' && l.text.startsWith('OnRetryGiveUp '))).toBe(true);
      expect(leaksIn(texts)).toEqual([]);
      expect(texts.filter((t) => t.includes('OpenTelemetryListener'))).toEqual([]); // below the cap
    },
    LONG_RUN_BUDGET,
  );

  it('a per-request operationKey is the context’s operation key, as is', async () => {
    await catalog.get('/users/7?token=secret', { operationKey: 'load-user' });
    await mirror.get('/users/7?token=secret', { operationKey: 'mirror-user' });
    expect([...operationKeys()]).toEqual(['load-user', 'mirror-user']);
    // The hedging client runs two pipelines (the handler's and the endpoint's): both carry the key.
    const executed = lines.lines.filter((l) => l.text.startsWith('PipelineExecuted')).map((l) => l.text);
    expect(executed.map((t) => / operation=(\S+) /.exec(t)?.[1])).toEqual(['load-user', 'mirror-user', 'mirror-user']);
  });

  it('a route template names the request: client, method and template, its query left out', async () => {
    await catalog.get('/users/7?token=secret', { routeTemplate: '/users/{id}' });
    await catalog.delete('/users/7', { routeTemplate: '/users/{id}?token={token}' });
    await mirror.get('/users/8?token=secret', { routeTemplate: '/users/{id}' });
    // The hedging handler's routing picks the host, even for an absolute URL: client and method only.
    await mirror.get('/users/9?token=secret');
    await mirror.get(`${other.url}/users/10?token=secret`);
    expect([...operationKeys()]).toEqual([
      'catalog GET /users/{id}',
      'catalog DELETE /users/{id}',
      'mirror GET /users/{id}',
      'mirror GET',
    ]);
    const points = await metricPoints();
    expect(points.filter((p) => p.attributes['operation.key'] === 'mirror GET /users/{id}').length).toBeGreaterThan(0);
  });

  it(
    'caps the operation keys the OpenTelemetry series get, whatever keys the requests choose',
    async () => {
      const tasks = Array.from(
        { length: 150 },
        (_, i) => () => catalog.get(`/search?q=${i}`, { operationKey: `search ${i} token=secret${i}` }),
      );
      await pool(tasks, 8);
      expect(operationKeys().size).toBe(150); // the listeners see the keys the requests chose

      const points = await metricPoints();
      const keys = keysOf(points);
      expect(keys.size).toBe(CAP + 1);
      expect(keys).toContain('(other)');
      const finished = spans.getFinishedSpans();
      expect(new Set(finished.map((s) => s.attributes['operation.key'])).has('(other)')).toBe(true);

      const warnings = lines.lines.filter((l) => l.level === 'warn' && l.text.includes('OpenTelemetryListener'));
      expect(warnings.map((l) => l.text)).toEqual([
        `OpenTelemetryListener: more than ${CAP} distinct operation keys (maxOperationKeys); further new keys are recorded as operation.key="(other)" OpenTelemetry`,
      ]);
    },
    LONG_RUN_BUDGET,
  );
});
