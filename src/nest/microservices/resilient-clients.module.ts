import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type InjectionToken,
  type ModuleMetadata,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import { ClientProxyFactory, type ClientOptions, type ClientProxy } from '@nestjs/microservices';
import { OptionsValidator, type ValidationIssue } from '../../core/index.js';
import { ResiliencePipelineRegistry } from '../../config/index.js';
import {
  resolveClientSettings,
  resolveClientTransport,
  type ResilientClientOptions,
} from './resilient-client.options.js';
import { ResilientClientProxy } from './resilient-client.proxy.js';
import { RPC_PREDICATES } from './rpc.predicates.js';

/** A client of `ResilientClientsModule`: where its `ClientProxy` comes from, and its options. @publicApi */
export interface ResilientClientRegistration extends ResilientClientOptions {
  /**
   * The `ClientProxy`: the injection token of one (e.g. the `name` given to `ClientsModule.register`), or
   * client options for `ClientProxyFactory.create` (the module then closes it at shutdown; `transport` is a
   * `Transport` value or its name, e.g. `'KAFKA'` — an unknown one fails the start). Default: the token
   * named like the client.
   */
  client?: InjectionToken | ClientOptions;
}

/** Options of `ResilientClientsModule.register`: the clients to wrap and the pipeline of each. @publicApi */
export interface ResilientClientsModuleOptions {
  /** The clients by name, as data; validated when the application starts. */
  clients: Record<string, ResilientClientRegistration>;
  /** Modules providing the `ClientProxy` tokens (e.g. `ClientsModule.register([...])`). */
  imports?: ModuleMetadata['imports'];
  /** Make the clients injectable everywhere. Default false. */
  isGlobal?: boolean;
}

/** The injection token of a named resilient client. @publicApi */
export function getResilientClientToken(name: string): string {
  return `nest-resilience:ResilientClientProxy:${name}`;
}

/** Injects a named `ResilientClientProxy`. @publicApi */
export const InjectResilientClient = (name: string): ParameterDecorator & PropertyDecorator =>
  Inject(getResilientClientToken(name));

/**
 * The resilient clients of an application, injectable by class: `get(name)` for the configured ones,
 * `wrap(name, client, options)` for any other `ClientProxy` (one made by `ClientProxyFactory`, say).
 *
 * @publicApi
 */
@Injectable()
export class ResilientClients implements OnApplicationShutdown {
  private readonly clients = new Map<string, ResilientClientProxy>();
  private readonly owned: ClientProxy[] = [];

  constructor(@Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry) {
    for (const [name, predicate] of Object.entries(RPC_PREDICATES)) registry.registerPredicate(name, predicate);
  }

  /** The configured client named `name`; throws for an unknown name, listing the known ones. */
  get(name: string): ResilientClientProxy {
    const client = this.clients.get(name);
    if (!client) {
      throw new Error(`Unknown resilient client "${name}" (known: ${[...this.clients.keys()].join(', ') || 'none'})`);
    }
    return client;
  }

  /** The names of the configured clients. */
  get names(): string[] {
    return [...this.clients.keys()];
  }

  /**
   * Makes a resilient client of `client` (validated like configuration: a `ResilienceValidationError`
   * lists every problem) and keeps it under `name`.
   */
  wrap(name: string, client: ClientProxy, options: ResilientClientOptions = {}): ResilientClientProxy {
    return this.wrapAll({ [name]: options }, new Map([[name, client]])).get(name)!;
  }

  /** @internal */
  wrapAll(
    clients: Record<string, ResilientClientOptions>,
    proxies: ReadonlyMap<string, ClientProxy>,
    owned: readonly ClientProxy[] = [],
    found: readonly ValidationIssue[] = [],
  ): Map<string, ResilientClientProxy> {
    const settings = resolveClientSettings(clients, this.registry, 'clients', found);
    const made = new Map<string, ResilientClientProxy>();
    for (const [name, s] of settings) {
      const resilient = new ResilientClientProxy(proxies.get(name)!, this.registry, s);
      this.clients.set(name, resilient);
      made.set(name, resilient);
    }
    this.owned.push(...owned);
    return made;
  }

  /** Closes the clients the module opened itself. */
  async onApplicationShutdown(): Promise<void> {
    const owned = this.owned.splice(0);
    await Promise.all(owned.map((client) => client.close() as unknown));
  }
}

function isClientOptions(value: unknown): value is ClientOptions {
  return typeof value === 'object' && value !== null && ('transport' in value || 'customClass' in value);
}

/**
 * Resilient `ClientProxy`s as configuration:
 *
 * ```ts
 * ResilientClientsModule.register({
 *   imports: [ClientsModule.register([{ name: 'inventory', transport: Transport.TCP, options: { port: 4010 } }])],
 *   clients: { inventory: { pipeline: 'rpc-standard', patterns: { 'stock.reserve': { idempotent: true } } } },
 * })
 * ```
 *
 * provides each client under `@InjectResilientClient(name)` and `ResilientClients` (by class). Needs
 * `ResilienceModule` in the application. Registers the predicates `rpc-failure`, `rpc-retryable` and
 * `rpc-transport`, and the standard pipeline as `rpc-standard` when a client names it and it is not
 * registered yet.
 *
 * @publicApi
 */
@Module({})
export class ResilientClientsModule {
  /** Wraps the named `ClientsModule` clients in `ResilientClientProxy` providers (`@InjectResilientClient(name)`). */
  static register(options: ResilientClientsModuleOptions): DynamicModule {
    const entries = Object.entries(options.clients ?? {}) as [string, ResilientClientRegistration | undefined][];
    const injected = entries.filter(([, r]) => !isClientOptions(r?.client));
    const tokens = injected.map(([name, r]) => (r?.client as InjectionToken | undefined) ?? name);
    const clientsProvider: Provider = {
      provide: ResilientClients,
      inject: [ResiliencePipelineRegistry, ...tokens],
      useFactory: (registry: ResiliencePipelineRegistry, ...proxies: ClientProxy[]) => {
        const clients = new ResilientClients(registry);
        const byName = new Map<string, ClientProxy>(injected.map(([name], i) => [name, proxies[i]]));
        const owned: ClientProxy[] = [];
        const configs: Record<string, ResilientClientOptions> = {};
        // Client options are checked along with the rest: one error lists every problem.
        const v = new OptionsValidator('');
        for (const [name, registration] of entries) {
          if (typeof registration !== 'object' || registration === null) {
            configs[name] = registration as unknown as ResilientClientOptions; // reported by the validation
            continue;
          }
          const { client, ...config } = registration;
          configs[name] = config;
          if (isClientOptions(client)) {
            const options = resolveClientTransport(v, `clients.${name}.client`, client);
            if (!options || !v.isValid) continue; // nothing more is made once anything is invalid
            const proxy = ClientProxyFactory.create(options);
            owned.push(proxy);
            byName.set(name, proxy);
          }
        }
        try {
          clients.wrapAll(configs, byName, owned, v.problems);
        } catch (error) {
          for (const proxy of owned) void proxy.close();
          throw error;
        }
        return clients;
      },
    };
    const providers: Provider[] = [
      clientsProvider,
      ...entries.map(([name]) => ({
        provide: getResilientClientToken(name),
        inject: [ResilientClients],
        useFactory: (clients: ResilientClients) => clients.get(name),
      })),
    ];
    return {
      module: ResilientClientsModule,
      global: options.isGlobal ?? false,
      imports: options.imports ?? [],
      providers,
      exports: providers,
    };
  }
}
