import { describe, expect, it } from '@jest/globals';
import * as root from '../src/index.js';
import * as core from '../src/core.entry.js';
import * as nest from '../src/nest/index.js';

describe('the package entry (".")', () => {
  it('exports by name every value of the core and of the Nest layer, and nothing else', () => {
    const expected = [...new Set([...Object.keys(core), ...Object.keys(nest)])].sort();
    expect(Object.keys(root).sort()).toEqual(expected);
    for (const name of Object.keys(core)) expect(root[name as keyof typeof root]).toBe(core[name as keyof typeof core]);
    for (const name of Object.keys(nest)) expect(root[name as keyof typeof root]).toBe(nest[name as keyof typeof nest]);
  });
});
