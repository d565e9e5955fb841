import { describe, it } from '@jest/globals';
import fc from 'fast-check';
import { commandArb, configArb, runScenario } from '../../contracts/circuit-breaker.contract.js';

describe('circuit breaker against a reference model (in-memory store)', () => {
  for (const kind of ['consecutive', 'time-window', 'count-window', 'slow-call'] as const) {
    it(`agrees with the model for the ${kind} breaker`, async () => {
      await fc.assert(
        fc.asyncProperty(configArb(kind), fc.array(commandArb, { minLength: 1, maxLength: 60 }), (config, commands) =>
          runScenario(config, commands),
        ),
        { numRuns: 300 },
      );
    });
  }
});
