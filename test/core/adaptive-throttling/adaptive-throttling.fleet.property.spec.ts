import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  AdaptiveThrottlingStateProvider,
  adaptiveThrottlingRejectProbability,
  InMemoryAdaptiveThrottlingStore,
  isAdaptiveThrottlingRejectedError,
  ResiliencePipelineBuilder,
  type ResiliencePipeline,
} from '../../../src/core.entry.js';
import { FakeTimeProvider, flushPromises } from '../../../src/testing/index.js';

const WINDOW = 20_000;
const BUCKET = WINDOW / 20;
const K = 2;

type Command = { kind: 'call'; instance: number; refused: boolean; draw: number } | { kind: 'advance'; ms: number };

const command = (instances: number): fc.Arbitrary<Command> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('call' as const),
        instance: fc.integer({ min: 0, max: instances - 1 }),
        refused: fc.boolean(),
        draw: fc.double({ min: 0, max: 0.999_999, noNaN: true }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3_000 }) }),
    },
  );

interface Member {
  readonly pipeline: ResiliencePipeline;
  readonly stats: AdaptiveThrottlingStateProvider;
  /** The draw the next call is decided with, and whether the strategy asked for it. */
  draw: number;
  drawn: boolean;
}

describe('adaptive throttling shared by a fleet (property)', () => {
  it("decides with the formula over the fleet's counts: between its own and everyone's, everyone's once synced", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 4 }).chain((n) =>
          fc.record({
            instances: fc.constant(n),
            syncInterval: fc.constantFrom(250, 500, 1_000),
            start: fc.integer({ min: 1_000_000, max: 2_000_000 }),
            commands: fc.array(command(n), { maxLength: 60 }),
          }),
        ),
        async ({ instances, syncInterval, start, commands }) => {
          const time = new FakeTimeProvider(start);
          const store = new InMemoryAdaptiveThrottlingStore();
          /** Every call made: its bucket, its instance, and whether the dependency accepted it. */
          const calls: { bucket: number; instance: number; accepted: boolean }[] = [];
          const members: Member[] = [];
          for (let i = 0; i < instances; i++) {
            const member: Member = {
              pipeline: undefined as never,
              stats: new AdaptiveThrottlingStateProvider(),
              draw: 0.999_999,
              drawn: false,
            };
            (member as { pipeline: ResiliencePipeline }).pipeline = new ResiliencePipelineBuilder({
              name: 'fleet',
              timeProvider: time,
              random: () => {
                member.drawn = true;
                return member.draw;
              },
            })
              .addAdaptiveThrottling({
                k: K,
                window: WINDOW,
                stateProvider: member.stats,
                fleet: { store, syncInterval },
              })
              .build();
            members.push(member);
          }

          const counts = (bucketNow: number, instance?: number) => {
            let requests = 0;
            let accepts = 0;
            for (const c of calls) {
              if (c.bucket <= bucketNow - 20 || (instance !== undefined && c.instance !== instance)) continue;
              requests++;
              if (c.accepted) accepts++;
            }
            return { requests, accepts };
          };

          const call = async (i: number, refused: boolean, draw: number) => {
            const member = members[i];
            const before = member.stats.statistics;
            member.draw = draw;
            member.drawn = false;
            let ran = false;
            const error = await member.pipeline
              .execute(() => {
                ran = true;
                return refused ? Promise.reject(Object.assign(new Error('busy'), { status: 503 })) : 'ok';
              })
              .then(
                () => undefined,
                (e: unknown) => e,
              );
            // Rejected exactly when the draw fell under the probability of the figures it saw.
            expect(isAdaptiveThrottlingRejectedError(error)).toBe(member.drawn && draw < before.rejectProbability);
            expect(ran).toBe(!isAdaptiveThrottlingRejectedError(error));
            calls.push({ bucket: Math.floor(time.now() / BUCKET), instance: i, accepted: ran && !refused });
          };

          const check = () => {
            const bucketNow = Math.floor(time.now() / BUCKET);
            const all = counts(bucketNow);
            members.forEach((member, i) => {
              const s = member.stats.statistics;
              expect(s.rejectProbability).toBe(adaptiveThrottlingRejectProbability(s.requests, s.accepts, K));
              if (!s.shared) return;
              // Within the sync lag: at least its own counts, at most everyone's.
              const own = counts(bucketNow, i);
              expect(s.requests).toBeGreaterThanOrEqual(own.requests);
              expect(s.accepts).toBeGreaterThanOrEqual(own.accepts);
              expect(s.requests).toBeLessThanOrEqual(all.requests);
              expect(s.accepts).toBeLessThanOrEqual(all.accepts);
            });
          };

          // Each instance's first call starts its syncing.
          for (let i = 0; i < instances; i++) await call(i, false, 0.999_999);
          await flushPromises();
          for (const c of commands) {
            if (c.kind === 'call') await call(c.instance, c.refused, c.draw);
            else {
              time.advance(c.ms);
              await flushPromises();
            }
            check();
          }

          // Two quiet sync rounds: every instance has sent what it counted and read everyone's.
          for (let round = 0; round < 2; round++) {
            time.advance(syncInterval);
            await flushPromises();
          }
          const all = counts(Math.floor(time.now() / BUCKET));
          for (const member of members) {
            const s = member.stats.statistics;
            expect(s.shared).toBe(true);
            expect([s.requests, s.accepts]).toEqual([all.requests, all.accepts]);
            expect(s.rejectProbability).toBe(adaptiveThrottlingRejectProbability(all.requests, all.accepts, K));
          }
          for (const member of members) await member.pipeline.dispose();
          expect(time.pendingTimerCount).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });
});
