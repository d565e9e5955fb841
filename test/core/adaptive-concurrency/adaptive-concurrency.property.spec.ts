import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  isRateLimiterRejectedError,
  ResilienceContext,
  ResiliencePipelineBuilder,
  setCriticality,
  TimeoutRejectedError,
  type Criticality,
  type ResiliencePipeline,
} from '../../../src/core.entry.js';
import { FakeTimeProvider, flushPromises } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';

type Command =
  | { kind: 'start'; criticality: Criticality }
  | { kind: 'finish'; pick: number; drop: boolean }
  | { kind: 'advance'; ms: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('start' as const),
    criticality: fc.constantFrom<Criticality>('critical', 'default', 'sheddable'),
  }),
  fc.record({ kind: fc.constant('finish' as const), pick: fc.nat(), drop: fc.boolean() }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 400 }) }),
);

interface Call {
  readonly criticality: Criticality;
  state: 'waiting' | 'running' | 'rejected' | 'done';
  reason?: string;
  finish?: (drop: boolean) => void;
}

interface Limiter {
  /** The pipeline under test and the limit it holds now. */
  readonly pipeline: ResiliencePipeline<unknown>;
  readonly limit: () => number;
  readonly sheddableRatio: number;
  readonly queueLimit: number;
}

function adaptive(time: FakeTimeProvider, algorithm: 'gradient2' | 'aimd', queueLimit: number): Limiter {
  let limit = 4;
  const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
    .addAdaptiveConcurrencyLimiter({
      algorithm,
      initialLimit: 4,
      minLimit: 1,
      maxLimit: 12,
      queueLimit,
      windowSize: 3,
      longWindow: 5,
      slowCallDuration: 300,
      onLimitChanged: (args) => (limit = args.limit),
    })
    .build();
  return { pipeline, limit: () => limit, sheddableRatio: 0.8, queueLimit };
}

function fixed(queueLimit: number): Limiter {
  const pipeline = new ResiliencePipelineBuilder().addConcurrencyLimiter({ permitLimit: 5, queueLimit }).build();
  return { pipeline, limit: () => 5, sheddableRatio: 0.8, queueLimit };
}

/**
 * Runs `commands` against the limiter and checks, at every step: no call runs beyond the current limit;
 * a sheddable call runs only below its share and never waits; a critical call is turned away only
 * when no default call waits; no default call is let in while a critical one waits.
 */
async function check(limiter: Limiter, commands: Command[]): Promise<void> {
  const calls: Call[] = [];
  const violations: string[] = [];
  let running = 0;
  let admitted = 0;
  const waiting = (c: Criticality) => calls.filter((x) => x.state === 'waiting' && x.criticality === c).length;
  for (const command of commands) {
    if (command.kind === 'start') {
      const call: Call = { criticality: command.criticality, state: 'waiting' };
      const runningBefore = running;
      const criticalWaitingBefore = waiting('critical');
      const defaultWaitingBefore = waiting('default');
      calls.push(call);
      const context = setCriticality(new ResilienceContext(), command.criticality);
      limiter.pipeline
        .execute(() => {
          // Admitted: never past the limit; a default call never passes a waiting critical one.
          if (running + 1 > limiter.limit()) violations.push(`${running + 1} running, limit ${limiter.limit()}`);
          if (call.criticality === 'default' && waiting('critical') > 0) violations.push('default before critical');
          running++;
          admitted++;
          call.state = 'running';
          const gate = deferred<string>();
          call.finish = (drop) => {
            running--;
            call.state = 'done';
            if (drop) gate.reject(new TimeoutRejectedError(1));
            else gate.resolve('ok');
          };
          return gate.promise;
        }, context)
        .catch((error: unknown) => {
          if (!isRateLimiterRejectedError(error)) return; // a dropped call's own failure
          call.state = 'rejected';
          call.reason = error.reason;
        });
      await flushPromises();
      if (call.criticality === 'sheddable') {
        expect(call.state).not.toBe('waiting');
        if (call.state === 'running') expect(runningBefore).toBeLessThan(limiter.limit() * limiter.sheddableRatio);
      }
      if (call.criticality === 'critical' && call.state === 'rejected') {
        expect(defaultWaitingBefore).toBe(0);
        expect(criticalWaitingBefore).toBe(limiter.queueLimit);
      }
    } else if (command.kind === 'finish') {
      const active = calls.filter((c) => c.state === 'running');
      if (active.length > 0) active[command.pick % active.length].finish!(command.drop);
      await flushPromises();
    } else {
      await (limiter as unknown as { time?: FakeTimeProvider }).time?.advanceAsync(command.ms);
    }
  }
  // Finishing the running calls lets the waiting ones in, until nobody is left.
  while (calls.some((c) => c.state === 'running')) {
    for (const call of calls) if (call.state === 'running') call.finish!(false);
    await flushPromises();
  }
  expect(calls.filter((c) => c.state === 'waiting')).toEqual([]);
  await limiter.pipeline.dispose();
  expect(violations).toEqual([]);
  expect(admitted).toBe(calls.filter((c) => c.state === 'done').length);
}

describe('the adaptive concurrency limiter, under any sequence of calls', () => {
  it.each(['gradient2', 'aimd'] as const)('never runs more calls than its current limit (%s)', async (algorithm) => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3 }), fc.array(commandArb, { maxLength: 60 }), async (q, commands) => {
        const time = new FakeTimeProvider();
        const limiter = Object.assign(adaptive(time, algorithm, q), { time });
        await check(limiter, commands);
      }),
      { numRuns: 60 },
    );
  });

  it('sheds by criticality in the same order as the fixed concurrency limiter', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3 }), fc.array(commandArb, { maxLength: 60 }), async (q, commands) => {
        await check(fixed(q), commands);
      }),
      { numRuns: 60 },
    );
  });
});
