import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { CallHandler } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { KafkaContext, MqttContext, NatsContext, RmqContext, TcpContext } from '@nestjs/microservices';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { defer, lastValueFrom, of } from 'rxjs';
import {
  getCriticality,
  isDeadlineExceededError,
  ResiliencePipelineRegistry,
  type ResilienceContext,
} from '../../../src/index.js';
import { currentResilienceContext, RequestDeadlineInterceptor } from '../../../src/nest/index.js';
import { readRpcMetadata } from '../../../src/nest/deadlines/rpc-metadata.propagation.js';
import { toResilienceRpcError } from '../../../src/nest/microservices/index.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/**
 * What Nest hands a gRPC handler (`@GrpcMethod`): the request, the call's `Metadata` and the call. These
 * have the shape of `@grpc/grpc-js`'s: `Metadata.get(key)` lists every value of a key (keys in lower case),
 * `getMap()`; the call's `getDeadline()` is a `Date` (or `Infinity` without a deadline), set by the server
 * from the caller's `grpc-timeout`.
 */
class GrpcMetadata {
  constructor(private readonly entries: Record<string, string[]> = {}) {}

  get(key: string): string[] {
    return this.entries[key.toLowerCase()] ?? [];
  }

  getMap(): Record<string, string> {
    return Object.fromEntries(Object.entries(this.entries).map(([key, values]) => [key, values[0]]));
  }
}

function grpcCall(deadline: Date | number = Infinity) {
  return { getDeadline: () => deadline };
}

class PricesService {
  price = (): void => undefined;
}

const NOW = Date.UTC(2026, 0, 1);

describe('RequestDeadlineInterceptor on a gRPC call', () => {
  const clock = new FakeTimeProvider();
  const interceptor = new RequestDeadlineInterceptor(new ResiliencePipelineRegistry({ timeProvider: clock }));
  let seen: ResilienceContext[];
  const handler: CallHandler = {
    handle: () =>
      defer(() => {
        seen.push(currentResilienceContext()!);
        return of({ price: 42 });
      }),
  };

  beforeEach(() => {
    seen = [];
    // The call's deadline is wall-clock time: fixed here, so budgets are exact.
    jest.spyOn(Date, 'now').mockReturnValue(NOW);
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  function handle(request: object, metadata: GrpcMetadata, call = grpcCall()): Promise<unknown> {
    const context = new ExecutionContextHost([request, metadata, call], PricesService, new PricesService().price);
    context.setType('rpc');
    return lastValueFrom(interceptor.intercept(context, handler));
  }

  const budgetSeen = () => seen[0].deadline - clock.now();

  it("makes x-request-deadline-ms in the metadata the handler's deadline", async () => {
    await expect(handle({ sku: 'G-1' }, new GrpcMetadata({ 'x-request-deadline-ms': ['1500'] }))).resolves.toEqual({
      price: 42,
    });
    expect(budgetSeen()).toBe(1_500);
  });

  it('reads a grpc-timeout entry of the metadata', async () => {
    await handle({}, new GrpcMetadata({ 'grpc-timeout': ['800m'] }));
    expect(budgetSeen()).toBe(800);
  });

  it("reads the call's own deadline; the smallest of it, the metadata and the data field wins", async () => {
    await handle({}, new GrpcMetadata(), grpcCall(new Date(NOW + 1_200)));
    expect(budgetSeen()).toBe(1_200);
    seen = [];
    await handle({}, new GrpcMetadata({ 'x-request-deadline-ms': ['500'] }), grpcCall(new Date(NOW + 1_200)));
    expect(budgetSeen()).toBe(500);
    seen = [];
    const request = { sku: 'G-2', 'x-request-deadline-ms': 300 };
    await handle(request, new GrpcMetadata({ 'x-request-deadline-ms': ['500'] }), grpcCall(new Date(NOW + 1_200)));
    expect(budgetSeen()).toBe(300);
    expect(request).toEqual({ sku: 'G-2' });
  });

  it('runs a call without a deadline as it is', async () => {
    await handle({}, new GrpcMetadata(), grpcCall(Infinity));
    expect(seen).toEqual([undefined]);
  });

  it('rejects a spent budget before the handler runs, with the DEADLINE_EXCEEDED payload', async () => {
    const spent: [GrpcMetadata, ReturnType<typeof grpcCall>][] = [
      [new GrpcMetadata({ 'x-request-deadline-ms': ['0'] }), grpcCall()],
      [new GrpcMetadata({ 'grpc-timeout': ['0m'] }), grpcCall()],
      [new GrpcMetadata(), grpcCall(new Date(NOW - 5))],
    ];
    for (const [metadata, call] of spent) {
      const error = await handle({}, metadata, call).catch((e: unknown) => e);
      expect(isDeadlineExceededError(error)).toBe(true);
      expect(toResilienceRpcError(error)).toEqual({
        status: 504,
        error: 'Gateway Timeout',
        message: "The caller's deadline has passed.",
        retryAfter: null,
        code: 'DEADLINE_EXCEEDED',
      });
    }
    expect(seen).toEqual([]);
  });

  it("makes x-criticality in the metadata the handler's criticality", async () => {
    await handle({}, new GrpcMetadata({ 'x-criticality': ['sheddable'] }));
    expect(getCriticality(seen[0])).toBe('sheddable');
  });
});

describe("reading the budget from a transport context's metadata", () => {
  const args = (context: unknown) => [{}, context];

  it('matches entry names in any case', () => {
    const nats = natsHeaders();
    nats.set('X-Request-Deadline-Ms', '1500');
    nats.set('X-Criticality', 'critical');
    expect(readRpcMetadata(args(new NatsContext(['subject', nats])))).toEqual({
      budget: 1_500,
      criticality: 'critical',
    });
    const rmq = new RmqContext([{ properties: { headers: { 'Grpc-Timeout': '2S' } } }, {}, 'pattern']);
    expect(readRpcMetadata(args(rmq))).toEqual({ budget: 2_000, criticality: undefined });
  });

  it('takes the first of repeated MQTT user properties, and the smaller of the two entries', () => {
    const userProperties = { 'x-request-deadline-ms': ['900', '5000'], 'grpc-timeout': '1S' };
    const mqtt = new MqttContext(['topic', { properties: { userProperties } }]);
    expect(readRpcMetadata(args(mqtt))).toEqual({ budget: 900, criticality: undefined });
  });

  it("reads a Kafka record's headers, as Buffers (what kafkajs hands over) or text", () => {
    const buffers = {
      'x-request-deadline-ms': Buffer.from('1500'),
      'X-Criticality': [Buffer.from('sheddable'), Buffer.from('critical')],
    };
    const kafka = new KafkaContext([{ headers: buffers }, 0, 'prices'] as never);
    expect(readRpcMetadata(args(kafka))).toEqual({ budget: 1_500, criticality: 'sheddable' });
    const text = new KafkaContext([{ headers: { 'grpc-timeout': '250m' } }, 0, 'prices'] as never);
    expect(readRpcMetadata(args(text))).toEqual({ budget: 250, criticality: undefined });
  });

  it('finds nothing in a message without metadata, nor in the context of TCP', () => {
    const nothing = { budget: undefined, criticality: undefined };
    expect(readRpcMetadata(args(new NatsContext(['subject', undefined])))).toEqual(nothing);
    expect(readRpcMetadata(args(new RmqContext([{ properties: {} }, {}, 'pattern'])))).toEqual(nothing);
    expect(readRpcMetadata(args(new MqttContext(['topic', {}])))).toEqual(nothing);
    expect(readRpcMetadata(args(new TcpContext([undefined as never, 'pattern'])))).toEqual(nothing);
    expect(readRpcMetadata(args(new KafkaContext([{ headers: {} }, 0, 'topic'] as never)))).toEqual(nothing);
    expect(readRpcMetadata(args(new KafkaContext([{}, 0, 'topic'] as never)))).toEqual(nothing);
  });
});
