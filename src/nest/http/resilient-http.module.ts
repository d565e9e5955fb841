import { HttpModule, HttpService } from '@nestjs/axios';
import { Inject, Module, type DynamicModule, type Provider } from '@nestjs/common';
import type { AxiosRequestConfig } from 'axios';
import { ResiliencePipelineRegistry } from '../../core/index.js';
import { ResilientHttpClient } from './resilient-http.client.js';
import {
  handleHttpFailure,
  handleRetryableHttpFailure,
  standardHttpPipeline,
  type StandardHttpPipelineOptions,
} from './standard-http-pipeline.js';

/** @publicApi */
export interface ResilientHttpModuleOptions extends AxiosRequestConfig {
  /** Names the client (its injection token is `getResilientHttpClientToken(name)`). Default `default`. */
  name?: string;
  /**
   * The pipeline: the name of a registered one, or options of the standard pipeline (the default), which
   * is registered as `http:<name>`.
   */
  pipeline?: string | StandardHttpPipelineOptions;
  /** One pipeline instance — one circuit — per scheme + host + port. Default true. */
  perAuthority?: boolean;
  /** Statuses that count as failures besides 408, 429 and 5xx, e.g. `[404]`. Default none. */
  failureStatusCodes?: number[];
  /** Treat POST and PATCH as safe to repeat. Default false (set `idempotent` per request instead). */
  idempotent?: boolean;
}

/** The injection token of a named client. @publicApi */
export function getResilientHttpClientToken(name = 'default'): string {
  return `nest-resilience:ResilientHttpClient:${name}`;
}

/** Injects a named `ResilientHttpClient`. @publicApi */
export const InjectResilientHttpClient = (name?: string): ParameterDecorator & PropertyDecorator =>
  Inject(getResilientHttpClientToken(name));

/**
 * Resilient HTTP clients on `@nestjs/axios`: `ResilientHttpModule.register({ name, baseURL, pipeline })`
 * provides a `ResilientHttpClient` (by class for the default client, by `@InjectResilientHttpClient(name)`
 * otherwise) whose requests run through a named pipeline — by default the standard one. Needs
 * `ResilienceModule` in the application. Registers the predicates `http-failure` and `http-retryable`.
 *
 * @publicApi
 */
@Module({})
export class ResilientHttpModule {
  static register(options: ResilientHttpModuleOptions = {}): DynamicModule {
    const {
      name = 'default',
      pipeline,
      perAuthority = true,
      failureStatusCodes = [],
      idempotent = false,
      ...axiosConfig
    } = options;
    const pipelineName = typeof pipeline === 'string' ? pipeline : `http:${name}`;
    const standard =
      typeof pipeline === 'string' ? undefined : standardHttpPipeline(pipeline, `ResilientHttpModule "${name}"`);
    const token = getResilientHttpClientToken(name);
    const clientProvider: Provider = {
      provide: token,
      inject: [HttpService, ResiliencePipelineRegistry],
      useFactory: (http: HttpService, registry: ResiliencePipelineRegistry) => {
        registry.registerPredicate('http-failure', handleHttpFailure);
        registry.registerPredicate('http-retryable', handleRetryableHttpFailure);
        if (standard && !registry.pipelineNames.includes(pipelineName))
          registry.addPipelines({ [pipelineName]: standard });
        registry.getPipeline(pipelineName); // an unknown name fails the start, listing the known ones
        return new ResilientHttpClient(http, registry, {
          pipeline: pipelineName,
          perAuthority,
          failureStatusCodes,
          idempotent,
        });
      },
    };
    const providers: Provider[] = [clientProvider];
    if (name === 'default') providers.push({ provide: ResilientHttpClient, useExisting: token });
    return {
      module: ResilientHttpModule,
      imports: [HttpModule.register(axiosConfig)],
      providers,
      exports: providers,
    };
  }
}
