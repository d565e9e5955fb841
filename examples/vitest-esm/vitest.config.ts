// Vitest loads ES modules and TypeScript as they are. Vite 8 transforms TypeScript with Oxc, which reads
// `experimentalDecorators` and `emitDecoratorMetadata` from tsconfig.json: Nest's decorators and the
// constructor types its injector reads work without a plugin (with Vite 7 or older, which used esbuild,
// add the SWC plugin instead). The library's FakeTimeProvider is the clock: leave Vitest's fake timers off.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { environment: 'node', include: ['test/**/*.spec.ts'] },
});
