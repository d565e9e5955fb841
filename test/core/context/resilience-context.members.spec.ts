import { describe, expect, it } from '@jest/globals';
import {
  ResilienceContext,
  ResiliencePipeline,
  ResiliencePipelineBuilder,
  ResilienceProperties,
  ResiliencePropertyKey,
} from '../../../src/core.entry.js';

const Tenant = new ResiliencePropertyKey<string>('tenant');
const Count = new ResiliencePropertyKey<number | undefined>('count');

describe('ResilienceContext members', () => {
  it('keeps the operation key and shares the given property bag', () => {
    const bag = new ResilienceProperties().set(Tenant, 'acme');
    const context = new ResilienceContext({ operationKey: 'orders', properties: bag });
    expect(context.operationKey).toBe('orders');
    expect(context.properties).toBe(bag);
    expect(context.attemptNumber).toBe(0);
    expect(new ResilienceContext().operationKey).toBeUndefined();
  });

  it("without a caller signal: a signal of its own that never aborts, the same on every read, not another context's", () => {
    const context = new ResilienceContext();
    const signal = context.signal;
    expect(signal.aborted).toBe(false);
    expect(context.signal).toBe(signal);
    expect(new ResilienceContext().signal).not.toBe(signal);
    expect(context.isCancellationRequested).toBe(false);
  });

  it('with a caller signal: that signal, and a call on it ends with its reason once it aborts', async () => {
    const controller = new AbortController();
    const context = new ResilienceContext({ signal: controller.signal });
    expect(context.signal).toBe(controller.signal);
    expect(context.isCancellationRequested).toBe(false);
    const reason = new Error('caller left');
    controller.abort(reason);
    expect(context.isCancellationRequested).toBe(true);
    await expect(ResiliencePipeline.empty.execute(() => 'never', context)).rejects.toBe(reason);
  });

  it('hasProperties: false until a property is stored, without creating a bag to answer', () => {
    const context = new ResilienceContext();
    expect(context.hasProperties).toBe(false);
    const bag = context.properties;
    expect(context.hasProperties).toBe(false);
    bag.set(Tenant, 'acme');
    expect(context.hasProperties).toBe(true);
    bag.clear();
    expect(context.hasProperties).toBe(false);
    expect(context.properties).toBe(bag);
  });

  it('a context made without state carries no state slot, nor do its forks (contexts stay small)', () => {
    const context = new ResilienceContext();
    expect(Object.keys(context)).not.toContain('_state');
    expect(Object.keys(context.fork())).not.toContain('_state');
  });

  it('a fork of a fork keeps the attempt number and gets a fresh copy of the properties', () => {
    const context = new ResilienceContext({ operationKey: 'k' });
    context.attemptNumber = 3;
    const copy = context.fork().fork();
    expect(copy.attemptNumber).toBe(3);
    expect(copy.operationKey).toBe('k');
    expect(copy.hasProperties).toBe(false);
  });

  it('wrapCallback does nothing outside an execution', async () => {
    const context = new ResilienceContext();
    let wrapped = 0;
    context.wrapCallback((run) => {
      wrapped++;
      return run();
    });
    await expect(ResiliencePipeline.empty.execute(() => 'plain', context)).resolves.toBe('plain');
    expect(wrapped).toBe(0);
  });

  it('wrapCallback wraps the later attempts of the current call only, passing context and state through', async () => {
    const pipeline = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 2, delay: 0 }).build();
    const context = new ResilienceContext();
    const seen: string[] = [];
    await pipeline.execute(
      (ctx, state: string) => {
        seen.push(`attempt ${ctx.attemptNumber} ${state}`);
        if (ctx.attemptNumber === 0)
          ctx.wrapCallback((run) => {
            seen.push('around');
            return run();
          });
        if (ctx.attemptNumber < 2) throw new Error('again');
        return 'done';
      },
      context,
      's',
    );
    expect(seen).toEqual(['attempt 0 s', 'around', 'attempt 1 s', 'around', 'attempt 2 s']);
    seen.length = 0;
    await pipeline.execute(() => seen.push('next call'), context);
    expect(seen).toEqual(['next call']);
  });
});

describe('ResilienceProperties', () => {
  it('stores, reads, replaces and deletes typed values by key name', () => {
    const bag = new ResilienceProperties();
    expect(bag.get(Tenant)).toBeUndefined();
    expect(bag.has(Tenant)).toBe(false);
    expect(bag.set(Tenant, 'a')).toBe(bag);
    expect(bag.get(new ResiliencePropertyKey<string>('tenant'))).toBe('a');
    bag.set(Tenant, 'b');
    expect(bag.get(Tenant)).toBe('b');
    expect(bag.size).toBe(1);
    expect(bag.delete(Tenant)).toBe(true);
    expect(bag.delete(Tenant)).toBe(false);
    expect(bag.has(Tenant)).toBe(false);
    expect(bag.size).toBe(0);
  });

  it('getOrDefault returns a stored value, even undefined, and the default only when there is none', () => {
    const bag = new ResilienceProperties();
    expect(bag.getOrDefault(Count, 5)).toBe(5);
    bag.set(Count, 0);
    expect(bag.getOrDefault(Count, 5)).toBe(0);
    bag.set(Count, undefined);
    expect(bag.getOrDefault(Count, 5)).toBeUndefined();
  });

  it('addOrReplace copies every entry of another bag over its own; entries and clear', () => {
    const bag = new ResilienceProperties().set(Tenant, 'a').set(Count, 1);
    const other = new ResilienceProperties().set(Tenant, 'b');
    expect(bag.addOrReplace(other)).toBe(bag);
    expect([...bag.entries()]).toEqual([
      ['tenant', 'b'],
      ['count', 1],
    ]);
    expect(other.size).toBe(1);
    bag.clear();
    expect(bag.size).toBe(0);
    expect([...bag.entries()]).toEqual([]);
  });

  it('a key names itself', () => {
    expect(String(Tenant)).toBe('tenant');
    expect(Tenant.key).toBe('tenant');
  });
});
