// @ts-check
// The documentation site (`npm run docs` → docs-site/): the API reference of every public entry point and
// the guides of docs/ as pages. Any warning fails the build: an undocumented export, a broken link, an
// unknown tag.
import { OptionDefaults } from 'typedoc';
import { renderMermaidFences } from './scripts/typedoc.plugin.js';

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  name: 'nest-resilience',
  entryPoints: [
    'src/index.ts',
    'src/core.entry.ts',
    'src/config/index.ts',
    'src/nest/index.ts',
    'src/testing/index.ts',
    'src/redis/index.ts',
    'src/nest/http/index.ts',
    'src/oauth/index.ts',
    'src/nest/oauth/index.ts',
    'src/opentelemetry/index.ts',
    'src/nest/terminus/index.ts',
    'src/nest/admin/index.ts',
    'src/nest/microservices/index.ts',
  ],
  tsconfig: 'tsconfig.docs.json',
  out: 'docs-site',
  // Source links point at the project's repository whatever remote (if any) the checkout has.
  disableGit: true,
  gitRevision: 'main',
  sourceLinkTemplate: 'https://github.com/nest-resilience/nest-resilience/blob/{gitRevision}/{path}#L{line}',
  readme: 'README.md',
  projectDocuments: ['docs/*.md', 'docs/strategies/*.md', 'CHANGELOG.md'],
  // The built-in search finds words of the guides too, not only their titles.
  searchInDocuments: true,
  sort: ['kind', 'alphabetical'],
  excludePrivate: true,
  excludeProtected: true,
  excludeInternal: true,
  excludeExternals: true,
  modifierTags: [...OptionDefaults.modifierTags, '@publicApi'],
  highlightLanguages: [...OptionDefaults.highlightLanguages, 'csharp', 'java', 'text', 'http'],
  // The Mermaid diagrams of the guides are drawn in the browser (GitHub and npm render them too): the
  // fences become `<pre class="mermaid">`, the plugin copies Mermaid's bundle into assets/, and the
  // custom script renders them with it.
  markdownItLoader: renderMermaidFences,
  customJs: 'scripts/typedoc.diagrams.js',
  plugin: ['./scripts/typedoc.plugin.js'],
  // Types the public API mentions that are not exported themselves (an implementation detail of a
  // signature, or a constructor parameter only Nest's injector fills).
  intentionallyNotExported: [
    'ErrorClass',
    'QueueEntry',
    'ResilientHttpClientSettings',
    'ResilientClientSettings',
    'ClientSpec',
    'ResilienceStoreHandle',
    'RedisStoreConfig',
    'EventSink',
  ],
  // Members of src/redis and of the module's options whose comments belong to the Redis layer's own
  // change; remove a name here when its comment lands (TypeDoc fails on names that no longer apply).
  // The sections of PipelineConfig are derived from the strategy catalog: each is documented by its
  // data's type (RetryConfig, TimeoutConfig, …) and its strategy's descriptor.
  intentionallyNotDocumented: [
    'nest-resilience.PipelineConfig.fallback',
    'nest-resilience.PipelineConfig.totalTimeout',
    'nest-resilience.PipelineConfig.rateLimiter',
    'nest-resilience.PipelineConfig.concurrencyLimiter',
    'nest-resilience.PipelineConfig.adaptiveConcurrency',
    'nest-resilience.PipelineConfig.hedging',
    'nest-resilience.PipelineConfig.retry',
    'nest-resilience.PipelineConfig.adaptiveThrottling',
    'nest-resilience.PipelineConfig.circuitBreaker',
    'nest-resilience.PipelineConfig.timeout',
    'nest-resilience.PipelineConfig.chaosLatency',
    'nest-resilience.PipelineConfig.chaosFault',
    'nest-resilience.ResilienceModuleOptions',
    'nest-resilience.ResilienceModuleOptions.telemetryListeners',
    'nest-resilience/redis.StoreLogger.log',
    'nest-resilience/redis.StoreLogger.warn',
    'nest-resilience/redis.RedisCircuitBreakerStateStoreOptions',
    'nest-resilience/redis.RedisCircuitBreakerStateStoreOptions.timeProvider',
    'nest-resilience/redis.RedisRateLimiterOptions',
    'nest-resilience/redis.RedisRateLimiterOptions.limit',
    'nest-resilience/redis.RedisRateLimiterOptions.logger',
    'nest-resilience/redis.RedisRateLimiterOptions.timeProvider',
    'nest-resilience/redis.RedisConnectionOptions.password',
    'nest-resilience/redis.RedisConnectionOptions.sentinelPassword',
    'nest-resilience/redis.RedisNodeAddress.host',
    'nest-resilience/redis.RedisNodeAddress.port',
  ],
  validation: {
    notExported: true,
    invalidLink: true,
    invalidPath: true,
    rewrittenLink: true,
    notDocumented: true,
    unusedMergeModuleWith: true,
  },
  treatWarningsAsErrors: true,
  treatValidationWarningsAsErrors: true,
  githubPages: false,
  hideGenerator: true,
};
