import { HttpService } from '@nestjs/axios';
import {
  Inject,
  Module,
  type DynamicModule,
  type InjectionToken,
  type ModuleMetadata,
  type OptionalFactoryDependency,
  type Provider,
  type Type,
} from '@nestjs/common';
import axios, { type AxiosRequestConfig } from 'axios';
import { OptionsValidator, ResilienceValidationError } from '../../core/index.js';
import { ResiliencePipelineRegistry, type PipelineConfig } from '../../config/index.js';
import { standardPipelineIssues } from '../options/standard-pipeline.options.js';
import { ResilientHttpClient } from './resilient-http.client.js';
import {
  StandardHedgingHandler,
  validateStandardHedgingOptions,
  type StandardHedgingHandlerOptions,
} from './standard-hedging.handler.js';
import {
  handleHttpFailure,
  handleRetryableHttpFailure,
  standardHttpPipeline,
  type StandardHttpPipelineOptions,
} from './standard-http-pipeline.js';
import { NEST_RULES } from '../resilience.messages.js';

/** Options of `ResilientHttpModule.register`: axios defaults plus the client's name and pipeline. @publicApi */
export interface ResilientHttpModuleOptions extends AxiosRequestConfig {
  /**
   * Names the client (its injection token is `getResilientHttpClientToken(name)`) and begins the operation
   * key of each of its requests (`<name> GET <host or routeTemplate>`). Default `default`.
   */
  name?: string;
  /**
   * The pipeline: the name of a registered one, or options of the standard pipeline (the default), which
   * is registered as `http:<name>`.
   */
  pipeline?: string | StandardHttpPipelineOptions;
  /**
   * The standard hedging handler instead of a pipeline: requests go to endpoint groups (a relative URL
   * is resolved on each endpoint), pipelines `http-hedging:<name>` and `http-hedging:<name>:endpoint`.
   */
  hedging?: StandardHedgingHandlerOptions;
  /** One pipeline instance — one circuit — per scheme + host + port. Default true. */
  perAuthority?: boolean;
  /** Statuses that count as failures besides 408, 429 and 5xx, e.g. `[404]`. Default none. */
  failureStatusCodes?: number[];
  /** Treat POST and PATCH as safe to repeat. Default false (set `idempotent` per request instead). */
  idempotent?: boolean;
  /**
   * Answer a request that failed after its retries, when its error reaches Nest unhandled, with 502 Bad
   * Gateway (the upstream answered with an error, or could not be reached) or 504 Gateway Timeout (axios'
   * `timeout`), and one warning line naming the operation key — instead of a 500 and the whole axios
   * error in the log. Code that catches the error still gets the `AxiosError`. Needs the module's
   * `httpErrorMapping` (on by default). Default false.
   */
  upstreamErrorMapping?: boolean;
  /**
   * Send the budget left before each attempt's deadline (the caller's, tightened by the pipeline's
   * timeouts) in the `x-request-deadline-ms` header, when there is a deadline. Default true.
   */
  propagateDeadline?: boolean;
}

/** Creates a client's options (for `registerAsync({ useClass | useExisting })`). @publicApi */
export interface ResilientHttpOptionsFactory {
  /** Returns the client's options (or a promise of them). */
  createResilientHttpOptions(): ResilientHttpModuleOptions | Promise<ResilientHttpModuleOptions>;
}

/**
 * A client whose options are resolved at start-up, from other providers (`ConfigService`, …): exactly one
 * of `useFactory`, `useClass`, `useExisting`.
 *
 * @publicApi
 */
export interface ResilientHttpModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Names the client; the options' own `name`, if any, must match. Default `default`. */
  name?: string;
  /** Returns the client's options (or a promise of them). */
  useFactory?: (...args: never[]) => ResilientHttpModuleOptions | Promise<ResilientHttpModuleOptions>;
  /** Providers passed to `useFactory`. */
  inject?: (InjectionToken | OptionalFactoryDependency)[];
  /** A class whose `createResilientHttpOptions()` returns the options; the module instantiates it. */
  useClass?: Type<ResilientHttpOptionsFactory>;
  /** An existing provider whose `createResilientHttpOptions()` returns the options. */
  useExisting?: InjectionToken<ResilientHttpOptionsFactory>;
  /** Providers the factory class may depend on. */
  extraProviders?: Provider[];
}

/** The injection token of a named client. @publicApi */
export function getResilientHttpClientToken(name = 'default'): string {
  return `nest-resilience:ResilientHttpClient:${name}`;
}

/** Injects a named `ResilientHttpClient`. @publicApi */
export const InjectResilientHttpClient = (name?: string): ParameterDecorator & PropertyDecorator =>
  Inject(getResilientHttpClientToken(name));

type ClientSpec = ResilientHttpModuleOptions | ResilientHttpModuleAsyncOptions;

function isAsync(spec: ClientSpec): spec is ResilientHttpModuleAsyncOptions {
  return 'useFactory' in spec || 'useClass' in spec || 'useExisting' in spec;
}

/**
 * Resilient HTTP clients on `@nestjs/axios`: `ResilientHttpModule.register({ name, baseURL, pipeline })`
 * provides a `ResilientHttpClient` (by class for the default client, by `@InjectResilientHttpClient(name)`
 * otherwise) whose requests run through a named pipeline — by default the standard one — or through the
 * standard hedging handler (`hedging`). `registerAsync` resolves the options from other providers;
 * `forFeature` registers several clients at once. Every client's options are validated at start-up:
 * one `ResilienceValidationError` lists every problem of every client of the module. Needs
 * `ResilienceModule` in the application. Registers the predicates `http-failure` and `http-retryable`.
 *
 * @publicApi
 */
@Module({})
export class ResilientHttpModule {
  /** A `ResilientHttpClient` provider (named by `options.name`, `default` otherwise) on its own axios instance. */
  static register(options: ResilientHttpModuleOptions = {}): DynamicModule {
    return ResilientHttpModule.clients([options]);
  }

  /** `register` with options from `useFactory`, `useClass` or `useExisting`, validated when the application starts. */
  static registerAsync(options: ResilientHttpModuleAsyncOptions): DynamicModule {
    return ResilientHttpModule.clients([options]);
  }

  /** Several named clients, each given by options or async options. */
  static forFeature(clients: readonly ClientSpec[]): DynamicModule {
    return ResilientHttpModule.clients(clients);
  }

  private static clients(specs: readonly ClientSpec[]): DynamicModule {
    const imports: NonNullable<ModuleMetadata['imports']> = [];
    const providers: Provider[] = [];
    const optionTokens: symbol[] = [];
    const names = specs.map((spec) => spec.name ?? 'default');
    for (const [i, spec] of specs.entries()) {
      const token = Symbol(`nest-resilience:ResilientHttpOptions:${names[i]}`);
      optionTokens.push(token);
      if (!isAsync(spec)) {
        providers.push({ provide: token, useValue: spec });
        continue;
      }
      imports.push(...(spec.imports ?? []));
      providers.push(...(spec.extraProviders ?? []));
      if (spec.useFactory) {
        providers.push({ provide: token, useFactory: spec.useFactory, inject: spec.inject ?? [] });
      } else {
        const factoryToken = spec.useExisting ?? spec.useClass;
        if (spec.useClass) providers.push({ provide: spec.useClass, useClass: spec.useClass });
        providers.push({
          provide: token,
          inject: factoryToken ? [factoryToken] : [],
          useFactory: (factory: ResilientHttpOptionsFactory | undefined) => factory?.createResilientHttpOptions() ?? {},
        });
      }
    }
    // One provider validates every client of the module, so one error lists every problem.
    const clientsToken = Symbol('nest-resilience:ResilientHttpClients');
    providers.push({
      provide: clientsToken,
      inject: [ResiliencePipelineRegistry, ...optionTokens],
      useFactory: (registry: ResiliencePipelineRegistry, ...options: ResilientHttpModuleOptions[]) =>
        createClients(registry, specs, names, options),
    });
    const exported: Provider[] = [];
    for (const name of new Set(names)) {
      exported.push({
        provide: getResilientHttpClientToken(name),
        inject: [clientsToken],
        useFactory: (clients: Map<string, ResilientHttpClient>) => clients.get(name),
      });
    }
    if (names.includes('default')) {
      exported.push({ provide: ResilientHttpClient, useExisting: getResilientHttpClientToken('default') });
    }
    return { module: ResilientHttpModule, imports, providers: [...providers, ...exported], exports: exported };
  }
}

function createClients(
  registry: ResiliencePipelineRegistry,
  specs: readonly ClientSpec[],
  names: readonly string[],
  resolved: readonly ResilientHttpModuleOptions[],
): Map<string, ResilientHttpClient> {
  registry.registerPredicate('http-failure', handleHttpFailure);
  registry.registerPredicate('http-retryable', handleRetryableHttpFailure);
  const v = new OptionsValidator('');
  const clients = new Map<string, ResilientHttpClient>();
  const seen = new Set<string>();
  const pending: (() => void)[] = [];
  resolved.forEach((options, i) => {
    const name = names[i];
    const path = `ResilientHttpModule "${name}"`;
    const cv = v.child(path);
    if (typeof name !== 'string' || name.length === 0) cv.add('name', name, NEST_RULES.nonEmptyString);
    if (seen.has(name)) cv.add('name', name, NEST_RULES.registeredTwice);
    seen.add(name);
    if (typeof options !== 'object' || options === null) {
      v.add(path, options, NEST_RULES.factoryOptions);
      return;
    }
    if (isAsync(specs[i]) && options.name !== undefined && options.name !== name) {
      cv.add('name', options.name, `must match the name the client was registered with ("${name}")`);
    }
    const client = validateClient(registry, options, name, v, path);
    if (client) pending.push(() => clients.set(name, client()));
  });
  v.throwIfInvalid('Invalid resilient HTTP client options');
  for (const create of pending) create();
  return clients;
}

/** Checks one client's options; returns how to create it, or `undefined` when anything is invalid. */
function validateClient(
  registry: ResiliencePipelineRegistry,
  options: ResilientHttpModuleOptions,
  name: string,
  root: OptionsValidator,
  path: string,
): (() => ResilientHttpClient) | undefined {
  const v = root.child(path);
  const before = root.problems.length;
  const {
    pipeline,
    hedging,
    perAuthority = true,
    failureStatusCodes = [],
    idempotent = false,
    upstreamErrorMapping = false,
    propagateDeadline = true,
    ...axiosOptions
  } = options;
  const axiosConfig = { ...axiosOptions } as AxiosRequestConfig & { name?: string };
  delete axiosConfig.name;
  v.boolean('perAuthority', options.perAuthority)
    .boolean('idempotent', options.idempotent)
    .boolean('upstreamErrorMapping', options.upstreamErrorMapping)
    .boolean('propagateDeadline', options.propagateDeadline);
  if (!Array.isArray(failureStatusCodes)) v.add('failureStatusCodes', failureStatusCodes, NEST_RULES.statuses);
  else {
    failureStatusCodes.forEach((status, j) =>
      v.number(`failureStatusCodes[${j}]`, status, { min: 400, max: 599, integer: true }),
    );
  }
  v.duration('timeout', axiosConfig.timeout);
  if (axiosConfig.baseURL !== undefined && !isAbsoluteUrl(axiosConfig.baseURL)) {
    v.add('baseURL', axiosConfig.baseURL, NEST_RULES.absoluteUrl);
  }
  if (pipeline !== undefined && typeof pipeline !== 'string' && (typeof pipeline !== 'object' || pipeline === null)) {
    v.add('pipeline', pipeline, NEST_RULES.pipelineNameOrOptions);
  }
  if (hedging !== undefined) {
    if (pipeline !== undefined) v.add('pipeline', pipeline, NEST_RULES.notWithHedgingHandler);
    if (options.perAuthority !== undefined)
      v.add('perAuthority', options.perAuthority, NEST_RULES.notWithHedgingCircuits);
    if (axiosConfig.baseURL !== undefined) v.add('baseURL', axiosConfig.baseURL, NEST_RULES.notWithHedgingEndpoints);
    validateStandardHedgingOptions(v, 'hedging', hedging);
  }
  const pipelineName = typeof pipeline === 'string' ? pipeline : `http:${name}`;
  let standard: PipelineConfig | undefined;
  if (hedging === undefined && typeof pipeline === 'string' && !registry.pipelineNames.includes(pipeline)) {
    const known = registry.pipelineNames.join(', ') || 'none';
    v.add('pipeline', pipeline, `must name a registered pipeline (known: ${known})`);
  } else if (hedging === undefined && typeof pipeline !== 'string') {
    try {
      standard = standardHttpPipeline(pipeline, `${path}.pipeline`);
    } catch (error) {
      if (!(error instanceof ResilienceValidationError)) throw error;
      root.addIssues(error.issues);
    }
  }
  if (hedging !== undefined && registry.pipelineNames.includes(`http-hedging:${name}`)) {
    v.add('name', name, `is taken: a pipeline "http-hedging:${name}" is registered already`);
  }
  if (root.problems.length > before) return undefined;

  const http = new HttpService(axios.create(axiosConfig));
  const settings = { name, perAuthority, failureStatusCodes, idempotent, upstreamErrorMapping, propagateDeadline };
  if (hedging !== undefined) {
    const hedgingName = `http-hedging:${name}`;
    const handler = StandardHedgingHandler.create(http, registry, hedging, hedgingName, root, `${path}.hedging`);
    if (!handler) return undefined;
    return () =>
      new ResilientHttpClient(http, registry, {
        ...settings,
        perAuthority: false,
        pipeline: hedgingName,
        hedging: handler,
      });
  }
  if (standard && !registry.pipelineNames.includes(pipelineName)) {
    try {
      registry.addPipelines({ [pipelineName]: standard });
    } catch (error) {
      if (!(error instanceof ResilienceValidationError)) throw error;
      // Reported at the options the user wrote, not at the pipeline they became.
      root.addIssues(standardPipelineIssues(error.issues, pipelineName, `${path}.pipeline`, pipeline));
      return undefined;
    }
  }
  return () => new ResilientHttpClient(http, registry, { ...settings, pipeline: pipelineName });
}

function isAbsoluteUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}
