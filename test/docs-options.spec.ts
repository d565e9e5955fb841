// The option tables of the guides against the options the code accepts: every table whose first column
// is `option` (or `section`) carries a `<!-- options: <name> -->` marker naming the key list it documents,
// and its first column names exactly those keys — so an option added, renamed or removed in the code
// fails here until the table says so too. The key lists are the validators' own (`knownKeys`), or, for
// options no validator lists, every key of the options' type (checked by the compiler).
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADAPTIVE_CONCURRENCY_OPTION_KEYS } from '../src/core/adaptive-concurrency/adaptive-concurrency.options.js';
import {
  ADAPTIVE_THROTTLING_FLEET_OPTION_KEYS,
  ADAPTIVE_THROTTLING_OPTION_KEYS,
} from '../src/core/adaptive-throttling/adaptive-throttling.options.js';
import { CHAOS_COMMON_OPTION_KEYS, CHAOS_KIND_OPTION_KEYS } from '../src/core/chaos/chaos.options.js';
import { CIRCUIT_BREAKER_OPTION_KEYS } from '../src/core/circuit-breaker/circuit-breaker.options.js';
import { FALLBACK_OPTION_KEYS } from '../src/core/fallback/fallback.options.js';
import { HEDGING_OPTION_KEYS } from '../src/core/hedging/hedging.options.js';
import { BUILDER_OPTION_KEYS } from '../src/core/pipeline/resilience-pipeline.builder.js';
import { RATE_LIMITER_OPTION_KEYS } from '../src/core/rate-limiter/rate-limiter.options.js';
import { STRATEGY_CATALOG } from '../src/config/index.js';
import { RETRY_BUDGET_OPTION_KEYS } from '../src/core/retry/retry.budget.js';
import { RETRY_OPTION_KEYS } from '../src/core/retry/retry.options.js';
import { TIMEOUT_OPTION_KEYS } from '../src/core/timeout/timeout.options.js';
import type { ResilientHttpModuleOptions } from '../src/nest/http/resilient-http.module.js';
import type { OAuthModuleOptions } from '../src/nest/oauth/oauth.module.js';
import type { ResilienceModuleOptions } from '../src/nest/options/resilience-module-options.interface.js';
import type { OAuthClientOptions } from '../src/oauth/oauth-client.options.js';
import { STORE_KEYS } from '../src/redis/redis-resilience-store.factory.js';
import { FLEET_OPTION_KEYS } from '../src/nest/admin/resilience-admin.options.js';
import { THROTTLE_LIMIT_KEYS, THROTTLE_OPTION_KEYS } from '../src/nest/options/resilience-throttle.options.js';
import {
  adaptiveConcurrencyRegistration,
  adaptiveThrottlingRegistration,
  chaosBehaviorRegistration,
  chaosFaultRegistration,
  chaosLatencyRegistration,
  chaosOutcomeRegistration,
  circuitBreakerRegistration,
  concurrencyLimiterRegistration,
  fallbackRegistration,
  hedgingRegistration,
  rateLimiterRegistration,
  retryRegistration,
  timeoutRegistration,
  type StrategyDefinition,
} from '../src/core.entry.js';
import { markdownFilesUnder } from './package/markdown-links.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every key of an options type, listed once: the compiler fails when the type gains or loses one. */
function keysOf<T>(keys: Record<keyof T, true>): string[] {
  return Object.keys(keys);
}

const chaosKinds = Object.values(CHAOS_KIND_OPTION_KEYS).flat();

/** What each marker documents. */
const KEY_LISTS: Record<string, readonly string[]> = {
  builder: BUILDER_OPTION_KEYS,
  retry: RETRY_OPTION_KEYS,
  timeout: TIMEOUT_OPTION_KEYS,
  fallback: FALLBACK_OPTION_KEYS,
  circuitBreaker: CIRCUIT_BREAKER_OPTION_KEYS,
  hedging: HEDGING_OPTION_KEYS,
  rateLimiter: RATE_LIMITER_OPTION_KEYS,
  adaptiveConcurrency: ADAPTIVE_CONCURRENCY_OPTION_KEYS,
  adaptiveThrottling: ADAPTIVE_THROTTLING_OPTION_KEYS,
  adaptiveThrottlingFleet: ADAPTIVE_THROTTLING_FLEET_OPTION_KEYS,
  chaos: CHAOS_COMMON_OPTION_KEYS,
  chaosKinds,
  chaosAll: [...CHAOS_COMMON_OPTION_KEYS, ...chaosKinds],
  budget: RETRY_BUDGET_OPTION_KEYS,
  pipelineConfig: [...STRATEGY_CATALOG.filter((line) => line.registration).map((line) => line.name), 'strategies'],
  redisStore: STORE_KEYS,
  adminFleet: FLEET_OPTION_KEYS,
  throttle: THROTTLE_OPTION_KEYS,
  throttleLimit: THROTTLE_LIMIT_KEYS,
  forRoot: [
    ...keysOf<ResilienceModuleOptions>({
      pipelines: true,
      predicates: true,
      store: true,
      timeProvider: true,
      telemetryListeners: true,
      logging: true,
      httpErrorMapping: true,
      publicNames: true,
      defaultInterceptorPipeline: true,
      asyncContextPropagation: true,
      criticalityHeader: true,
      throttle: true,
    }),
    // The module's own extra (ConfigurableModuleBuilder's setExtras).
    'isGlobal',
  ],
  // The module's own options; the rest are axios's (`baseURL`, `timeout`, …), in a row of their own.
  httpRegister: keysOf<Omit<ResilientHttpModuleOptions, keyof import('axios').AxiosRequestConfig>>({
    name: true,
    pipeline: true,
    hedging: true,
    perAuthority: true,
    failureStatusCodes: true,
    idempotent: true,
    upstreamErrorMapping: true,
    propagateDeadline: true,
  }),
  oauth: keysOf<OAuthClientOptions & OAuthModuleOptions>({
    issuer: true,
    pendingLimits: true,
    endpoints: true,
    clientId: true,
    clientSecret: true,
    clientAuthentication: true,
    clientPrivateKey: true,
    clientPrivateKeyId: true,
    clientAssertionAlgorithm: true,
    redirectUri: true,
    postLogoutRedirectUri: true,
    logoutWithIdTokenHint: true,
    scopes: true,
    pkceMethod: true,
    allowProviderWithoutS256: true,
    pendingTtl: true,
    allowInsecureRequests: true,
    tokenEndpoint: true,
    tokenRequests: true,
    pipeline: true,
    pendingStore: true,
    logger: true,
    logBurstWindow: true,
    timeProvider: true,
    deferDiscovery: true,
  }),
};

/** Option tables not held to a key list, and why. */
const EXEMPT: Record<string, string> = {
  // Its first column shows whole topology objects (`sentinels: [...], name: '…'`); the keys themselves
  // are in configuration.md's `store: { redis }` table, which is checked.
  'docs/redis.md:50': 'topology examples',
};

interface OptionTable {
  location: string;
  marker: string | undefined;
  names: string[];
}

function optionTables(page: string): OptionTable[] {
  const lines = readFileSync(resolve(root, page), 'utf8').split('\n');
  const tables: OptionTable[] = [];
  let fenced = false;
  for (let index = 0; index < lines.length; index++) {
    if (lines[index].startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    const header = /^\|\s*(option|section)\s*\|/.exec(lines[index]);
    if (!header || !/^\|\s*-+/.test(lines[index + 1] ?? '')) continue;
    let back = index - 1;
    while (back >= 0 && lines[back].trim() === '') back--;
    const marker = /^<!-- options: (\w+) -->$/.exec(lines[back]?.trim() ?? '')?.[1];
    const names: string[] = [];
    let row = index + 2;
    for (; row < lines.length && lines[row].startsWith('|'); row++) {
      const first = lines[row].split(/(?<!\\)\|/)[1] ?? '';
      for (const [, code] of first.matchAll(/`([^`]+)`/g)) {
        const name = /^[A-Za-z_$][\w$]*/.exec(code)?.[0];
        if (name) names.push(name);
      }
    }
    tables.push({ location: `${page}:${index + 1}`, marker, names });
    index = row;
  }
  return tables;
}

const pages = ['README.md', ...markdownFilesUnder(root, 'docs')];
const tables = pages.flatMap(optionTables);

describe('the option tables of the guides', () => {
  it('are found (configuration.md and the strategy pages)', () => {
    expect(tables.length).toBeGreaterThan(15);
    expect(tables.filter((table) => table.location.startsWith('docs/strategies/')).length).toBeGreaterThanOrEqual(7);
  });

  it('each name the key list they document, or are exempt for a stated reason', () => {
    const unmarked = tables
      .filter((table) => table.marker === undefined && !(table.location in EXEMPT))
      .map((table) => table.location);
    const unknown = tables
      .filter((table) => table.marker !== undefined && !(table.marker in KEY_LISTS))
      .map((table) => `${table.location}: ${table.marker}`);
    expect({ unmarked, unknown }).toEqual({ unmarked: [], unknown: [] });
  });

  it.each(tables.filter((table) => table.marker !== undefined && table.marker in KEY_LISTS))(
    '$location lists exactly the $marker options the code accepts',
    ({ marker, names }) => {
      const accepted = [...new Set(KEY_LISTS[marker!])].sort();
      const documented = [...new Set(names)].sort();
      expect({
        undocumented: accepted.filter((key) => !documented.includes(key)),
        unknownToTheCode: documented.filter((key) => !accepted.includes(key)),
      }).toEqual({ undocumented: [], unknownToTheCode: [] });
    },
  );
});

/** The strategies each page of docs/strategies/ covers: its Telemetry table lists their events. */
const PAGE_STRATEGIES: Record<string, Pick<StrategyDefinition, 'events'>[]> = {
  'docs/strategies/retry.md': [retryRegistration],
  'docs/strategies/timeout.md': [timeoutRegistration],
  'docs/strategies/fallback.md': [fallbackRegistration],
  'docs/strategies/circuit-breaker.md': [circuitBreakerRegistration],
  'docs/strategies/hedging.md': [hedgingRegistration],
  'docs/strategies/rate-limiter.md': [rateLimiterRegistration, concurrencyLimiterRegistration],
  'docs/strategies/adaptive-concurrency.md': [adaptiveConcurrencyRegistration],
  'docs/strategies/adaptive-throttling.md': [adaptiveThrottlingRegistration],
  'docs/strategies/chaos.md': [
    chaosFaultRegistration,
    chaosLatencyRegistration,
    chaosOutcomeRegistration,
    chaosBehaviorRegistration,
  ],
};

/** The first column of the table under `## Telemetry`. */
function telemetryEvents(page: string): string[] {
  const text = readFileSync(resolve(root, page), 'utf8');
  const section = text.split('\n## Telemetry\n')[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => /^\| `/.test(line))
    .map((line) => /`([^`]+)`/.exec(line)![1]);
}

describe('the telemetry tables of the strategy pages', () => {
  it('cover every page of docs/strategies/', () => {
    expect(markdownFilesUnder(root, 'docs/strategies').sort()).toEqual(Object.keys(PAGE_STRATEGIES).sort());
  });

  it.each(Object.entries(PAGE_STRATEGIES))('%s lists exactly the events its strategies report', (page, strategies) => {
    const reported = [...new Set(strategies.flatMap((strategy) => strategy.events))].sort();
    expect([...new Set(telemetryEvents(page))].sort()).toEqual(reported);
  });
});
