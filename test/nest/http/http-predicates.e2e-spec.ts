import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Test } from '@nestjs/testing';
import { ResilienceContext, ResilienceModule, ResiliencePipelineRegistry } from '../../../src/index.js';
import { handleHttpFailure, handleRetryableHttpFailure, HTTP_REQUEST_INFO } from '../../../src/nest/http/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every module reachable through static and dynamic relative imports from `entry`, plus package imports. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    const imports = /(?:import|export)[^'"]*?from\s*'([^']+)'|import\(\s*'([^']+)'\s*\)/g;
    for (const match of source.matchAll(imports)) {
      const specifier = match[1] ?? match[2];
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return { files, packages };
}

describe('named HTTP predicates in module configuration', () => {
  it('are known to forRoot without any HTTP client module', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          pipelines: {
            upstream: {
              retry: { maxRetryAttempts: 2, delay: 0, shouldHandle: 'http-retryable' },
              circuitBreaker: { kind: 'consecutive', failureThreshold: 5, shouldHandle: 'http-failure' },
            },
          },
        }),
      ],
    }).compile();
    const registry = moduleRef.get(ResiliencePipelineRegistry);
    expect(registry.predicates.get('http-failure')).toBe(handleHttpFailure);
    expect(registry.predicates.get('http-retryable')).toBe(handleRetryableHttpFailure);

    let calls = 0;
    const unavailable = Object.assign(new Error('unavailable'), { response: { status: 503 } });
    const notFound = Object.assign(new Error('not found'), { response: { status: 404 } });
    await expect(
      registry.getPipeline('upstream').execute(() => {
        throw ++calls < 3 ? unavailable : notFound;
      }),
    ).rejects.toBe(notFound);
    expect(calls).toBe(3); // 503 retried, 404 not

    // A POST the HTTP client marked not repeatable is not retried by "http-retryable".
    calls = 0;
    await expect(
      registry.getPipeline('upstream').execute((context) => {
        context.properties.set(HTTP_REQUEST_INFO, {
          method: 'POST',
          url: '/orders',
          retryable: false,
          failureStatusCodes: [],
        });
        calls++;
        throw unavailable;
      }),
    ).rejects.toBe(unavailable);
    expect(calls).toBe(1);
    await moduleRef.close();
  });

  it('do not handle a cancellation', () => {
    const reason = Object.assign(new Error('client left'), { response: { status: 503 } });
    const controller = new AbortController();
    controller.abort(reason);
    const context = new ResilienceContext({ signal: controller.signal });
    const args = { outcome: { ok: false as const, error: reason }, context };
    expect(handleHttpFailure(args)).toBe(false);
    expect(handleRetryableHttpFailure(args)).toBe(false);
    expect(handleHttpFailure({ ...args, context: new ResilienceContext() })).toBe(true);
  });

  it('do not make the root or core entry load axios or the HTTP part', () => {
    for (const entry of ['src/index.ts', 'src/core/index.ts', 'src/nest/index.ts']) {
      const { files, packages } = importGraph(resolve(root, entry));
      const http = [...files].filter((f) => f.includes('/src/nest/http/'));
      expect(`${entry}: ${http.join(', ')}`).toBe(`${entry}: `);
      expect([...packages].filter((p) => /axios/.test(p))).toEqual([]);
    }
  });
});
