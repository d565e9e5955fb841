import { describe, expect, it } from '@jest/globals';
import { ResiliencePipelineBuilder, type ResilienceStrategy } from '../../src/core.entry.js';
import { microtaskTurns } from '../utils/microtask-turns.js';

/** A strategy of its own that carries some (not all) of the inline hooks: the pipeline must run its `execute`. */
function partlyInline(hooks: string[], log: string[]): ResilienceStrategy<unknown> {
  const strategy: Record<string, unknown> = {
    execute: (next: (c: unknown) => Promise<unknown>, context: unknown) => {
      log.push('execute');
      return next(context);
    },
  };
  for (const hook of hooks)
    strategy[hook] = () => {
      throw new Error(`${hook} must not be called`);
    };
  return strategy as unknown as ResilienceStrategy<unknown>;
}

describe('strategies of your own and the inline runs', () => {
  it.each([
    [['inlineEnter']],
    [['inlineExitValue']],
    [['inlineResume']],
    [['inlineEnter', 'inlineExitValue']],
    [['inlineEnter', 'inlineResume']],
    [['inlineExitValue', 'inlineResume']],
  ])('a strategy with only %j runs through execute, beside built-in inline strategies', async (hooks) => {
    const log: string[] = [];
    const pipeline = new ResiliencePipelineBuilder()
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .addStrategy({ type: 'partial', options: {}, create: () => partlyInline(hooks, log) })
      .addTimeout(1_000)
      .build();
    await expect(pipeline.execute(() => 'ok')).resolves.toBe('ok');
    expect(log).toEqual(['execute']);
  });

  it('a hook that is not a function does not make a strategy inline', async () => {
    const log: string[] = [];
    const strategy = Object.assign(partlyInline([], log), { inlineEnter: 1, inlineExitValue: 2, inlineResume: 3 });
    const pipeline = new ResiliencePipelineBuilder()
      .addCircuitBreaker()
      .addStrategy({ type: 'odd', options: {}, create: () => strategy })
      .addTimeout(1_000)
      .build();
    await expect(pipeline.execute(() => 'ok')).resolves.toBe('ok');
    expect(log).toEqual(['execute']);
  });

  it('the built-in inline strategies share one promise hop, as one strategy alone costs', async () => {
    const run = new ResiliencePipelineBuilder().addRetry().addCircuitBreaker().addTimeout(1_000).build();
    const alone = new ResiliencePipelineBuilder().addTimeout(1_000).build();
    expect(await microtaskTurns(run.execute(() => 1))).toBe(await microtaskTurns(alone.execute(() => 1)));
  });
});
