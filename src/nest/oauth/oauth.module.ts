import {
  Catch,
  HttpStatus,
  Inject,
  Injectable,
  Module,
  Optional,
  type ArgumentsHost,
  type DynamicModule,
  type ExceptionFilter,
  type FactoryProvider,
  type ModuleMetadata,
} from '@nestjs/common';
import { APP_FILTER, HttpAdapterHost } from '@nestjs/core';
import { ResiliencePipelineRegistry } from '../../core/index.js';
import {
  OAuthClient,
  OAuthFailure,
  type OAuthClientOptions,
  type PendingAuthorizationStore,
} from '../../oauth/index.js';
import { RESILIENCE_STORE_HANDLE, type ResilienceStoreHandle } from '../resilience-store.factory.js';

/** Options of `OAuthModule.register`: those of `OAuthClient`, with the pipeline named from the registry. @publicApi */
export interface OAuthModuleOptions extends Omit<OAuthClientOptions, 'pipeline' | 'pendingStore'> {
  /** A registry pipeline for discovery and token requests, by name. Default: `defaultTokenPipeline()`. */
  pipeline?: string;
  /**
   * Where pending logins wait. Default: Redis when `ResilienceModule` uses the Redis store (a login
   * started on one instance completes on another), else memory.
   */
  pendingStore?: PendingAuthorizationStore;
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
 * on the module's Redis connection when there is one.
 *
 * @publicApi
 */
@Injectable()
export class OAuthClientService extends OAuthClient {
  constructor(
    @Inject(OAUTH_OPTIONS) options: OAuthModuleOptions,
    @Inject(ResiliencePipelineRegistry) registry: ResiliencePipelineRegistry,
    @Optional() @Inject(RESILIENCE_STORE_HANDLE) storeHandle?: ResilienceStoreHandle,
  ) {
    const { pipeline, pendingStore, ...clientOptions } = options;
    super({
      ...clientOptions,
      timeProvider: clientOptions.timeProvider ?? registry.timeProvider,
      pipeline: pipeline === undefined ? undefined : registry.getPipeline(pipeline),
      pendingStore: pendingStore ?? storeHandle?.pendingAuthorizationStore?.(),
    });
  }
}

/**
 * Answers `OAuthFailure`s with their 4xx/5xx status and stable code, never with details that could leak
 * secrets; everything else goes on to the next filter.
 *
 * @publicApi
 */
@Catch(OAuthFailure)
export class OAuthExceptionFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: OAuthFailure, host: ArgumentsHost): void {
    const adapter = this.adapterHost.httpAdapter;
    const response = host.switchToHttp().getResponse<unknown>();
    if (exception.retryAfter !== undefined) {
      adapter.setHeader(response, 'Retry-After', String(Math.max(1, Math.ceil(exception.retryAfter / 1_000))));
    }
    const status = exception.status || HttpStatus.BAD_REQUEST;
    adapter.reply(response, { statusCode: status, error: exception.code, message: exception.message }, status);
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
