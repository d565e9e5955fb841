import {
  Inject,
  Injectable,
  Logger,
  Module,
  Optional,
  type DynamicModule,
  type FactoryProvider,
  type ModuleMetadata,
  type OnModuleInit,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ResiliencePipelineRegistry } from '../../config/index.js';
import { OAuthClient, type OAuthClientOptions, type PendingAuthorizationStore } from '../../oauth/index.js';
import { RESILIENCE_STORE_HANDLE, type ResilienceStoreHandle } from '../store/resilience-store.factory.js';
import { OAuthExceptionFilter } from './oauth-exception.filter.js';

/** Options of `OAuthModule.register`: those of `OAuthClient`, with the pipeline named from the registry. @publicApi */
export interface OAuthModuleOptions extends Omit<OAuthClientOptions, 'pipeline' | 'pendingStore'> {
  /** A registry pipeline for discovery and token requests, by name. Default: `defaultTokenPipeline(tokenRequests)`. */
  pipeline?: string;
  /**
   * Where pending logins wait. Default: Redis when `ResilienceModule` uses the Redis store (a login
   * started on one instance completes on another), else memory.
   */
  pendingStore?: PendingAuthorizationStore;
  /**
   * Discover the provider on the first login instead of at start-up. By default discovery runs when the
   * module starts, and a provider that does not fit (wrong issuer, no S256, an unsupported client
   * authentication method) or cannot be reached fails the start.
   */
  deferDiscovery?: boolean;
}

/** Options of `OAuthModule.registerAsync`: a factory of the options, with its imports and injected providers. @publicApi */
export interface OAuthModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Providers passed to `useFactory`. */
  inject?: FactoryProvider['inject'];
  /** Returns the options (or a promise of them). */
  useFactory: (...args: never[]) => OAuthModuleOptions | Promise<OAuthModuleOptions>;
}

/** The name of the HttpOnly cookie binding a login to the browser that started it. @publicApi */
export const OAUTH_BINDING_COOKIE = 'nr_oauth_binding';

const OAUTH_OPTIONS = Symbol('nest-resilience:oauth-options');

/**
 * `OAuthClient` as a Nest provider: its pipeline from the `ResiliencePipelineRegistry`, its pending store
 * on the module's Redis connection when there is one, its events on Nest's `Logger` (context `OAuth`),
 * and discovery at start-up unless deferred.
 *
 * @publicApi
 */
@Injectable()
export class OAuthClientService extends OAuthClient implements OnModuleInit {
  private readonly deferDiscovery: boolean;

  constructor(
    @Inject(OAUTH_OPTIONS) options: OAuthModuleOptions,
    @Inject(ResiliencePipelineRegistry) registry: ResiliencePipelineRegistry,
    @Optional() @Inject(RESILIENCE_STORE_HANDLE) storeHandle?: ResilienceStoreHandle,
  ) {
    const { pipeline, pendingStore, deferDiscovery, ...clientOptions } = options;
    super({
      ...clientOptions,
      logger: clientOptions.logger ?? new Logger('OAuth'),
      timeProvider: clientOptions.timeProvider ?? registry.timeProvider,
      pipeline: pipeline === undefined ? undefined : registry.getPipeline(pipeline),
      pendingStore: pendingStore ?? storeHandle?.pendingAuthorizationStore?.(),
    });
    this.deferDiscovery = deferDiscovery === true;
  }

  /** Discovers the provider at start-up (unless `deferDiscovery`), so a wrong issuer fails the start. */
  async onModuleInit(): Promise<void> {
    if (!this.deferDiscovery) await this.init();
  }
}

/**
 * The OAuth client with PKCE for Nest apps: `OAuthModule.register(options)` or `registerAsync({ inject,
 * useFactory })` provides `OAuthClientService` and maps `OAuthFailure` to HTTP answers. Needs
 * `ResilienceModule` in the application. Invalid options (e.g. `pkceMethod: 'plain'`) fail the start.
 *
 * @publicApi
 */
@Module({})
export class OAuthModule {
  /** Provides `OAuthClientService` configured with `options`, and `OAuthExceptionFilter` for its failures. */
  static register(options: OAuthModuleOptions): DynamicModule {
    return OAuthModule.registerAsync({ useFactory: () => options });
  }

  /** `register` with options from a factory (for example from `ConfigService`). */
  static registerAsync(options: OAuthModuleAsyncOptions): DynamicModule {
    return {
      module: OAuthModule,
      imports: options.imports ?? [],
      providers: [
        { provide: OAUTH_OPTIONS, inject: options.inject ?? [], useFactory: options.useFactory },
        OAuthClientService,
        { provide: APP_FILTER, useClass: OAuthExceptionFilter },
      ],
      exports: [OAuthClientService],
    };
  }
}
