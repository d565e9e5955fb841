import { describe, expect, it } from '@jest/globals';
import { RpcException } from '@nestjs/microservices';
import { EmptyResponseException } from '@nestjs/microservices/errors/empty-response.exception.js';
import { NetSocketClosedException } from '@nestjs/microservices/errors/net-socket-closed.exception.js';
import { TimeoutError } from 'rxjs';
import {
  BrokenCircuitError,
  IsolatedCircuitError,
  outcomeFromError,
  outcomeFromValue,
  RateLimiterRejectedError,
  ResilienceContext,
  ResiliencePipelineBuilder,
  ResilienceValidationError,
  TimeoutRejectedError,
} from '../../src/core.entry.js';
import {
  handleRetryableRpcFailure,
  handleRpcFailure,
  isRemoteRpcError,
  isResilienceRpcError,
  isRpcTransportError,
  patternRoute,
  RPC_CALL_INFO,
  standardRpcPipeline,
  toResilienceRpcError,
  type RpcCallInfo,
} from '../../src/nest/microservices/index.js';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

function args(error: unknown, info?: Partial<RpcCallInfo>) {
  const context = new ResilienceContext();
  if (info) {
    context.properties.set(RPC_CALL_INFO, {
      client: 'inventory',
      pattern: 'p',
      kind: 'send',
      retryable: true,
      retryRemoteErrors: () => false,
      countRemoteErrors: () => false,
      ...info,
    });
  }
  return { outcome: outcomeFromError(error), context };
}

describe('transport-aware RPC predicates', () => {
  it.each([
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED')],
    ['connection reset', withCode('read ECONNRESET', 'ECONNRESET')],
    ['TCP connection closed', new Error('Connection closed')],
    ['TCP socket closed', new NetSocketClosedException()],
    ['Redis not connected', new Error('Connection is closed.')],
    ['NATS nobody listening', new EmptyResponseException('inventory.echo')],
    ['NATS connection refused', withCode('connection refused', 'CONNECTION_REFUSED')],
    ['no reply within the attempt timeout', new TimeoutRejectedError(500)],
    ["RxJS' timeout()", new TimeoutError()],
    // What Nest's Redis, NATS, MQTT and RMQ clients reject calls with while they reconnect: a string.
    ['broker client reconnecting', 'Error: Connection lost. Trying to reconnect...'],
    ['RMQ client disconnected', 'Disconnected from RMQ. Trying to reconnect.'],
    ['broker connection failed', 'Connection to transport failed. Trying to reconnect...'],
  ])('a %s is a transport failure', (_, error) => {
    expect(isRpcTransportError(error)).toBe(true);
    expect(isRemoteRpcError(error)).toBe(false);
    expect(handleRpcFailure(args(error))).toBe(true);
    expect(handleRetryableRpcFailure(args(error))).toBe(true);
  });

  it.each([
    ['an RpcException payload', { code: 'OUT_OF_STOCK', message: 'No stock left.' }],
    ["Nest's answer for an unknown error", { status: 'error', message: 'Internal server error' }],
    ['a string payload', 'no such order'],
    ['a string payload that only mentions a lost connection', 'Connection lost to the stock database'],
  ])('%s is a remote error: not retried, not counted by default', (_, error) => {
    expect(isRpcTransportError(error)).toBe(false);
    expect(isRemoteRpcError(error)).toBe(true);
    expect(handleRpcFailure(args(error, {}))).toBe(false);
    expect(handleRetryableRpcFailure(args(error, {}))).toBe(false);
    expect(handleRetryableRpcFailure(args(error, { retryRemoteErrors: () => true }))).toBe(true);
    expect(handleRpcFailure(args(error, { countRemoteErrors: () => true }))).toBe(true);
  });

  it('a local programming error is neither transient nor remote', () => {
    const error = new TypeError('x is not a function');
    expect(isRpcTransportError(error)).toBe(false);
    expect(isRemoteRpcError(error)).toBe(false);
    expect(handleRpcFailure(args(error))).toBe(false);
    expect(handleRetryableRpcFailure(args(error))).toBe(false);
    expect(isRemoteRpcError(new RpcException('local'))).toBe(false);
  });

  it('retries a remote resilience rejection and counts it; never retries what may not be repeated', () => {
    const rejection = { status: 503, error: 'Service Unavailable', message: 'open', retryAfter: 1_000 };
    expect(isResilienceRpcError(rejection)).toBe(true);
    expect(handleRpcFailure(args(rejection, {}))).toBe(true);
    expect(handleRetryableRpcFailure(args(rejection, {}))).toBe(true);
    expect(handleRetryableRpcFailure(args(rejection, { kind: 'emit', retryable: false }))).toBe(false);
    expect(handleRetryableRpcFailure(args(new Error('Connection closed'), { retryable: false }))).toBe(false);
    expect(handleRpcFailure({ outcome: outcomeFromValue({ ok: true }) })).toBe(false);
  });

  it('maps resilience rejections to the stable payload, retryAfter in milliseconds', () => {
    expect(toResilienceRpcError(new BrokenCircuitError('open', 1_234.2))).toEqual({
      status: 503,
      error: 'Service Unavailable',
      message: 'A circuit is open.',
      retryAfter: 1_235,
    });
    expect(toResilienceRpcError(new IsolatedCircuitError())).toMatchObject({ status: 503, retryAfter: null });
    expect(toResilienceRpcError(new RateLimiterRejectedError('busy', 10))).toMatchObject({
      status: 429,
      error: 'Too Many Requests',
      retryAfter: 10,
    });
    expect(toResilienceRpcError(new RateLimiterRejectedError('busy'))).toMatchObject({ retryAfter: null });
    expect(toResilienceRpcError(new TimeoutRejectedError(5))).toMatchObject({ status: 504, error: 'Gateway Timeout' });
    expect(toResilienceRpcError(new Error('plain'))).toBeUndefined();
    expect(isResilienceRpcError({ status: 500, error: 'x', message: 'y' })).toBe(false);
    expect(isResilienceRpcError(new Error('Service Unavailable'))).toBe(false);
  });

  it('names the pipeline in the payload, never the circuit key or an address', async () => {
    const pipeline = new ResiliencePipelineBuilder({ name: 'inventory', instanceName: 'tcp://10.1.2.3:4000' })
      .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 })
      .build();
    await expect(pipeline.execute(() => Promise.reject(new Error('down at 10.1.2.3')))).rejects.toThrow('down');
    const rejection = await pipeline.execute(() => 1).catch((error: unknown) => error);

    const payload = toResilienceRpcError(rejection);
    expect(payload).toMatchObject({ status: 503, message: 'The circuit of "inventory" is open.' });
    expect(JSON.stringify(payload)).not.toContain('10.1.2.3');
    expect(toResilienceRpcError(rejection, { inventory: 'stock' })?.message).toBe('The circuit of "stock" is open.');
  });

  it('names patterns as Nest routes them (object keys sorted, recursively)', () => {
    expect(patternRoute('inventory.reserve')).toBe('inventory.reserve');
    expect(patternRoute(7)).toBe('7');
    expect(patternRoute({ role: 'stock', cmd: 'get' })).toBe('{"cmd":"get","role":"stock"}');
    expect(patternRoute({ b: { d: 1, c: 'x' }, a: 2 })).toBe('{"a":2,"b":{"c":"x","d":1}}');
  });
});

describe('standardRpcPipeline', () => {
  it('is total timeout → retry → breaker → attempt timeout with the RPC predicates, each part replaceable', () => {
    const config = standardRpcPipeline();
    expect(config).toMatchObject({ totalTimeout: 10_000, timeout: 2_000 });
    expect(config.retry).toMatchObject({
      maxRetryAttempts: 3,
      backoffType: 'exponential',
      shouldHandle: handleRetryableRpcFailure,
    });
    expect(config.circuitBreaker).toMatchObject({
      kind: 'consecutive',
      failureThreshold: 5,
      shouldHandle: handleRpcFailure,
    });
    const custom = standardRpcPipeline({
      retry: false,
      circuitBreaker: { kind: 'count-window', windowSize: 20 } as never,
    });
    expect(custom.retry).toBeUndefined();
    expect(custom.circuitBreaker).toEqual({
      kind: 'count-window',
      windowSize: 20,
      breakDuration: 5_000,
      shouldHandle: handleRpcFailure,
    });
  });

  it('rejects an attempt timeout longer than the total and unknown parts, in one error', () => {
    let error: unknown;
    try {
      standardRpcPipeline({ attemptTimeout: 20_000, retires: {} } as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues.map((i) => i.path).sort()).toEqual([
      'rpc.attemptTimeout',
      'rpc.retires',
    ]);
  });

  it("rejects a time-based breaker that samples less than two attempts' time, as the HTTP pipeline does", () => {
    const issues = (options: object) => {
      try {
        standardRpcPipeline(options);
        return [];
      } catch (error) {
        return (error as ResilienceValidationError).issues.map((i) => [i.path, i.value, i.rule]);
      }
    };
    const timeWindow = { kind: 'time-window', failureRatio: 0.5, minimumThroughput: 10 };
    expect(issues({ circuitBreaker: { ...timeWindow, samplingDuration: '3s' } })).toEqual([
      ['rpc.circuitBreaker.samplingDuration', 3_000, 'must be >= 2 × attemptTimeout (4000)'],
    ]);
    expect(issues({ circuitBreaker: { ...timeWindow, samplingDuration: '4s' } })).toEqual([]);
    expect(issues({ attemptTimeout: '1s', circuitBreaker: { ...timeWindow, samplingDuration: '3s' } })).toEqual([]);
    // Breakers that count calls, not time, sample no duration.
    expect(issues({ circuitBreaker: { kind: 'count-window', windowSize: 20 } })).toEqual([]);
    expect(issues({})).toEqual([]);
  });
});
