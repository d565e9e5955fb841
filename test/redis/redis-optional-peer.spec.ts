import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Every module reachable from an entry point through static imports and re-exports (value or type, so
 * everything its `.d.ts` files can reach); dynamic `import()` is not followed.
 */
function reachable(entry: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const stack = [resolve(root, entry)];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (found.has(file)) continue;
    const source = readFileSync(file, 'utf8');
    const specifiers = [...source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+['"]([^'"]+)['"]/gms)].map(
      (m) => m[1],
    );
    found.set(file, specifiers);
    for (const spec of specifiers) {
      if (spec.startsWith('.')) stack.push(join(dirname(file), spec.replace(/\.js$/, '.ts')));
    }
  }
  return found;
}

describe('ioredis stays an optional peer', () => {
  for (const entry of ['src/index.ts', 'src/nest/index.ts', 'src/core/index.ts']) {
    it(`is not reached from ${entry}, in code or in types (the Redis code is loaded with import() when configured)`, () => {
      const modules = reachable(entry);
      const offenders = [...modules.entries()]
        .filter(
          ([file, specs]) =>
            file.includes('/src/redis/') || specs.some((s) => s === 'ioredis' || s.startsWith('ioredis/')),
        )
        .map(([file]) => file.slice(root.length + 1));
      expect(offenders).toEqual([]);
      expect(modules.size).toBeGreaterThan(20);
    });
  }

  it('is loaded by the module only through a dynamic import of src/redis', () => {
    const factory = readFileSync(join(root, 'src/nest/store/resilience-store.factory.ts'), 'utf8');
    expect(factory).toMatch(/await import\('\.\.\/\.\.\/redis\/redis-resilience-store\.factory\.js'\)/);
  });
});
