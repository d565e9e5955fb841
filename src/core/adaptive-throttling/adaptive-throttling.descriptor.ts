import type { PredicateReference } from '../outcome/outcome.predicates.js';
import { StrategyServiceKey, type StrategyDescriptor } from '../strategy/resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';
import {
  ADAPTIVE_THROTTLING_OPTIONS,
  checkAdaptiveThrottlingOptions,
  type AdaptiveThrottlingFleetOptions,
  type AdaptiveThrottlingStrategyOptions,
} from './adaptive-throttling.options.js';
import type { AdaptiveThrottlingStore } from './adaptive-throttling.store.js';
import { AdaptiveThrottlingStrategy } from './adaptive-throttling.strategy.js';

/**
 * Where adaptive throttling sections with `fleet` share their windows (the registry's
 * `adaptiveThrottlingStore`; the Nest module's Redis store).
 *
 * @publicApi
 */
export const ADAPTIVE_THROTTLING_STORE_SERVICE = new StrategyServiceKey<AdaptiveThrottlingStore>(
  'adaptive-throttling-store',
);

/**
 * The `adaptiveThrottling` section: `AdaptiveThrottlingStrategyOptions` with `shouldHandle` as a
 * predicate reference (the state provider is for code), and `fleet` as `true` / `false` or its options
 * without the store (the registry's, e.g. the module's Redis store).
 *
 * @publicApi
 */
export type AdaptiveThrottlingConfig = Omit<
  AdaptiveThrottlingStrategyOptions<unknown>,
  'shouldHandle' | 'stateProvider' | 'fleet'
> & {
  shouldHandle?: PredicateReference;
  /**
   * `true`, or `{ syncInterval, key }`: share the window with the other instances through the registry's
   * store (the module's `store: { redis }`). `false` (default): this process only.
   */
  fleet?: boolean | Partial<AdaptiveThrottlingFleetOptions>;
};

/** A section's `fleet` as the strategy takes it: with the registry's store, unless it brings one. */
function fleetFromConfig(fleet: unknown, store: AdaptiveThrottlingStore | undefined): unknown {
  if (fleet !== true && (typeof fleet !== 'object' || fleet === null || Array.isArray(fleet))) return fleet;
  const given = fleet === true ? {} : (fleet as Record<string, unknown>);
  if (given.store !== undefined || store === undefined) return fleet;
  return { ...given, store };
}

const storeOutcome = (a: { readonly error: unknown }) => ({ ok: false as const, error: a.error });

/**
 * Client-side adaptive throttling: `addAdaptiveThrottling`, the `adaptiveThrottling` section and
 * `@AdaptiveThrottling`. One strategy — one window of counts — per pipeline instance; inspection reads
 * it through its `throttle` port.
 *
 * @publicApi
 */
export const adaptiveThrottlingStrategy: StrategyDescriptor<
  AdaptiveThrottlingStrategyOptions<unknown>,
  { adaptiveThrottling: AdaptiveThrottlingConfig }
> = defineStrategy({
  type: 'adaptive-throttling',
  options: ADAPTIVE_THROTTLING_OPTIONS,
  check: checkAdaptiveThrottlingOptions,
  events: {
    OnAdaptiveThrottlingRejected: {
      severity: 'warning',
      logAs: 'debug',
      changesState: true,
      describe: (a) => [
        { label: 'rejectProbability', value: a.rejectProbability.toFixed(3) },
        { attribute: 'throttle.reject_probability', value: a.rejectProbability },
        { label: 'accepts', value: `${a.accepts}/${a.requests}` },
      ],
    },
    // A fleet's window: its store stopped answering (this instance throttles on its own counts), or answers again.
    OnStateStoreUnavailable: { severity: 'error', outcome: storeOutcome },
    OnStateStoreRestored: { severity: 'information' }, // no outcome: nothing failed
  },
  create: (options, context) => new AdaptiveThrottlingStrategy(options, context),
  ports: ['throttle'],
  sections: {
    adaptiveThrottling: section<AdaptiveThrottlingConfig, AdaptiveThrottlingStrategyOptions<unknown>>({
      decorator: 'AdaptiveThrottling',
      fromConfig: (config, env) => {
        if (!('fleet' in config)) return config;
        if (config.fleet === false) {
          const { fleet: _off, ...rest } = config;
          return rest;
        }
        return { ...config, fleet: fleetFromConfig(config.fleet, env.service(ADAPTIVE_THROTTLING_STORE_SERVICE)) };
      },
    }),
  },
});

/** @deprecated Use `adaptiveThrottlingStrategy`. @publicApi */
export const adaptiveThrottlingRegistration = adaptiveThrottlingStrategy;
