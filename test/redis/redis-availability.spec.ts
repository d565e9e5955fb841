import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import type { Cluster } from 'ioredis';
import {
  failFastOnRefusal,
  nodeOf,
  RedisAvailability,
  servesSlots,
  WHOLE,
} from '../../src/redis/redis-availability.js';
import { keySlot } from '../../src/redis/redis.util.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { redisClient } from './redis-test.utils.js';

/**
 * What every Redis-backed part shares to decide whether Redis may be asked: per node on a cluster, one
 * outage and one recovery logged and reported per node. A stand-in cluster client (the fields the code
 * reads: `isCluster`, `status`, `slots`, and its `node error` events) gives each node's slots; the
 * real cluster runs in redis-cluster*.e2e-spec.ts.
 */
class ClusterStandIn extends EventEmitter {
  readonly isCluster = true;
  status = 'ready';
  /** slot → [primary, …replicas], as ioredis keeps it. */
  readonly slots: (string[] | undefined)[] = new Array<string[] | undefined>(16_384);

  assign(node: string, from: number, to: number): this {
    for (let slot = from; slot <= to; slot++) this.slots[slot] = [node, `${node}-replica`];
    return this;
  }
}

const A = '10.0.0.1:7000';
const B = '10.0.0.2:7001';
const cluster = () => new ClusterStandIn().assign(A, 0, 8_191).assign(B, 8_192, 16_383);
const asCluster = (c: ClusterStandIn) => c as unknown as Cluster;

function availability(options: { client?: ClusterStandIn; whileDown?: string; noLog?: boolean } = {}) {
  const time = new FakeTimeProvider(1_000);
  const warnings: string[] = [];
  const logs: string[] = [];
  const changes: [boolean, unknown][] = [];
  const logger = options.noLog
    ? { warn: (m: string) => void warnings.push(m) }
    : { warn: (m: string) => void warnings.push(m), log: (m: string) => void logs.push(m) };
  const a = new RedisAvailability({
    what: 'Redis test store',
    outageMode: 'local',
    whileDown: options.whileDown,
    retryInterval: 500,
    time,
    logger,
    onChange: (available, error) => void changes.push([available, error]),
    client: options.client && asCluster(options.client),
  });
  return { a, time, warnings, logs, changes };
}

describe('RedisAvailability', () => {
  it('a failure leaves the node alone for retryInterval, logged and reported once however often it repeats', () => {
    const { a, time, warnings, logs, changes } = availability();
    const down = new Error('connect ECONNREFUSED');
    expect(a.isDegraded).toBe(false);
    expect(a.skip(WHOLE)).toBe(false);
    expect(a.failed(down, WHOLE)).toBe(WHOLE);
    expect(a.isDegraded).toBe(true);
    expect(a.isDown(WHOLE)).toBe(true);
    expect(a.skip(WHOLE)).toBe(true);
    expect(a.retryAfter(time.now(), WHOLE)).toBe(500);
    time.advance(499);
    expect(a.skip(WHOLE)).toBe(true);
    expect(a.retryAfter(time.now(), WHOLE)).toBe(1);
    time.advance(1);
    expect(a.skip(WHOLE)).toBe(false); // may be tried again
    expect(a.retryAfter(time.now(), WHOLE)).toBe(1); // never 0: a wait is at least 1 ms
    a.failed(new Error('still down'), WHOLE); // tried again, failed again: a new wait, no new log line
    expect(a.skip(WHOLE)).toBe(true);
    expect(a.retryAfter(time.now(), WHOLE)).toBe(500);
    expect(warnings).toEqual([
      'Redis test store unavailable (connect ECONNREFUSED); using the "local" outage mode until it is back.',
    ]);
    expect(changes).toEqual([[false, down]]);
    a.answered(WHOLE);
    a.answered(WHOLE); // a second answer ends nothing
    expect(a.isDegraded).toBe(false);
    expect(a.skip(WHOLE)).toBe(false);
    expect(logs).toEqual(['Redis test store is back.']);
    expect(changes).toEqual([
      [false, down],
      [true, undefined],
    ]);
    expect([...a.downNodes]).toEqual([]);
  });

  it('says what happens while it is down when told, describes a thrown non-error, and logs a recovery as a warning without log()', () => {
    const { a, warnings } = availability({ whileDown: 'publishing pauses', noLog: true });
    a.failed('plain text', WHOLE);
    a.answered(WHOLE);
    expect(warnings).toEqual([
      'Redis test store unavailable (plain text); publishing pauses until it is back.',
      'Redis test store is back.',
    ]);
  });

  it('on a cluster, one outage per primary: a live primary answering does not end a dead one’s', () => {
    const client = cluster();
    const { a, time, warnings, logs, changes } = availability({ client });
    expect(a.failed(new Error('refused'), A)).toBe(A);
    expect(a.skip(A)).toBe(true);
    expect(a.skip(B)).toBe(false); // the other primary is asked as usual
    a.answered(B);
    expect(a.isDown(A)).toBe(true);
    expect(a.isDown(B)).toBe(false);
    time.advance(200);
    a.failed(new Error('refused'), B);
    expect([...a.downNodes]).toEqual([A, B]);
    expect(a.retryAfter(time.now(), A)).toBe(300);
    expect(a.retryAfter(time.now(), B)).toBe(500);
    a.answered(A);
    expect(a.isDegraded).toBe(true); // B still is
    a.answered(B);
    expect(a.isDegraded).toBe(false);
    expect(warnings).toEqual([
      `Redis test store unavailable on cluster node ${A} (refused); using the "local" outage mode until it is back.`,
      `Redis test store unavailable on cluster node ${B} (refused); using the "local" outage mode until it is back.`,
    ]);
    expect(logs).toEqual([
      `Redis test store is back on cluster node ${A}.`,
      `Redis test store is back on cluster node ${B}.`,
    ]);
    expect(changes.map(([available]) => available)).toEqual([false, false, true, true]);
  });

  it('a cluster connection that is not ready fails as a whole; any node answering ends that outage; the whole outage holds every node', () => {
    const client = cluster();
    const { a, time, warnings, logs } = availability({ client });
    client.status = 'connecting';
    expect(a.failed(new Error('not ready'), A)).toBe(WHOLE);
    expect(a.isDown(A)).toBe(false);
    expect(a.skip(A)).toBe(true); // the whole connection is left alone
    expect(a.skip(B)).toBe(true);
    time.advance(100);
    client.status = 'ready';
    a.failed(new Error('refused'), A); // now the node's own
    time.advance(450);
    expect(a.skip(A)).toBe(true);
    expect(a.retryAfter(time.now(), B)).toBe(1); // WHOLE's wait is over; B waits for no node outage
    time.advance(50);
    expect(a.skip(B)).toBe(false);
    a.answered(B); // ends the whole connection's outage, not A's
    expect(a.isDown(WHOLE)).toBe(false);
    expect(a.isDown(A)).toBe(true);
    expect(warnings).toHaveLength(2);
    expect(logs).toEqual(['Redis test store is back.']);
  });

  it('a single server is never split into nodes, whatever its status', async () => {
    const client = redisClient();
    client.on('error', () => undefined);
    try {
      const { a } = availability({ client: client as never });
      expect(client.status).not.toBe('ready'); // still connecting: on a cluster this would be the whole
      expect(a.failed(new Error('x'), A)).toBe(A);
      expect(nodeOf(client, 'any')).toBe(WHOLE);
      expect(servesSlots(client, WHOLE)).toBe(true);
      const settled = Promise.resolve('as is');
      expect(failFastOnRefusal(client, A, settled)).toBe(settled);
    } finally {
      client.disconnect();
    }
  });
});

describe('the node of a key on a cluster', () => {
  it('is the primary its slot is mapped to; a slot without an owner yet, or no slots at all, is the whole connection', () => {
    const client = cluster();
    const low = Array.from({ length: 50 }, (_, i) => `k${i}`).find((k) => keySlot(k) < 8_192)!;
    const high = Array.from({ length: 50 }, (_, i) => `k${i}`).find((k) => keySlot(k) >= 8_192)!;
    expect(nodeOf(asCluster(client), low)).toBe(A);
    expect(nodeOf(asCluster(client), high)).toBe(B);
    client.slots[keySlot(low)] = undefined;
    expect(nodeOf(asCluster(client), low)).toBe(WHOLE);
    const noSlots = Object.assign(new EventEmitter(), { isCluster: true, status: 'ready' });
    expect(nodeOf(noSlots as unknown as Cluster, low)).toBe(WHOLE);
  });

  it('a primary serves slots until a failover maps them to another', () => {
    const client = cluster();
    expect(servesSlots(asCluster(client), A)).toBe(true);
    expect(servesSlots(asCluster(client), `${A}-replica`)).toBe(false); // a replica is not a primary
    expect(servesSlots(asCluster(client), WHOLE)).toBe(true);
    client.assign(`${A}-promoted`, 0, 8_191);
    expect(servesSlots(asCluster(client), A)).toBe(false);
    const noSlots = Object.assign(new EventEmitter(), { isCluster: true });
    expect(servesSlots(noSlots as unknown as Cluster, A)).toBe(false);
  });
});

describe('failing fast when a cluster node refuses connections', () => {
  it('rejects the calls waiting on the refusing node at once; the others and later calls are untouched', async () => {
    const client = cluster();
    const never = new Promise<string>(() => undefined);
    const onA = failFastOnRefusal(asCluster(client), A, never);
    const alsoOnA = failFastOnRefusal(asCluster(client), A, never);
    let onBSettled = false;
    const onB = failFastOnRefusal(asCluster(client), B, never);
    void onB.then(
      () => (onBSettled = true),
      () => (onBSettled = true),
    );
    expect(client.listenerCount('node error')).toBe(1); // one watch per client, however many calls
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:7000'), { code: 'ECONNREFUSED' });
    client.emit('node error', Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }), A); // not a refusal
    client.emit('node error', refused, A);
    await expect(onA).rejects.toBe(refused);
    await expect(alsoOnA).rejects.toBe(refused);
    await new Promise((resolve) => setImmediate(resolve));
    expect(onBSettled).toBe(false);
    // A refusal given as text still rejects with an Error.
    const later = failFastOnRefusal(asCluster(client), A, never);
    client.emit('node error', { code: 'ECONNREFUSED', toString: () => 'refused as text' }, A);
    await expect(later).rejects.toThrow('refused as text');
  });

  it('settles like the call when it settles first; a single server or the whole connection gets the call as is', async () => {
    const client = cluster();
    await expect(failFastOnRefusal(asCluster(client), A, Promise.resolve('answered'))).resolves.toBe('answered');
    const failure = new Error('MOVED');
    await expect(failFastOnRefusal(asCluster(client), A, Promise.reject(failure))).rejects.toBe(failure);
    const call = Promise.resolve(1);
    expect(failFastOnRefusal(asCluster(client), WHOLE, call)).toBe(call);
  });
});
