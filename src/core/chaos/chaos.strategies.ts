import type { ResilienceContext } from '../context/resilience.context.js';
import { unwrapOutcome } from '../outcome/outcome.model.js';
import type {
  ResilienceStrategy,
  StrategyBuilderContext,
  StrategyNext,
} from '../strategy/resilience-strategy.interface.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import type { TimeProvider } from '../time/time.provider.js';
import { isThenable } from '../utils/is-thenable.util.js';
import {
  DEFAULT_CHAOS_LATENCY,
  DEFAULT_INJECTION_RATE,
  type ChaosBehaviorOptions,
  type ChaosFaultOptions,
  type ChaosLatencyOptions,
  type ChaosOutcomeOptions,
  type ChaosStrategyOptions,
} from './chaos.options.js';

/**
 * Decides per call whether to inject: enabled (option or generator) and `random() < injectionRate`
 * (option or generator). Calls that are not injected pass straight through.
 *
 * @internal
 */
abstract class ChaosStrategy<T> implements ResilienceStrategy<T> {
  protected readonly time: TimeProvider;
  protected readonly telemetry: StrategyTelemetry;
  private readonly random: () => number;
  private readonly staticDecision: boolean;

  protected constructor(
    private readonly base: ChaosStrategyOptions,
    context: StrategyBuilderContext,
  ) {
    this.time = context.timeProvider;
    this.telemetry = context.telemetry;
    this.random = base.random ?? context.random;
    this.staticDecision = !base.enabledGenerator && !base.injectionRateGenerator;
  }

  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    if (this.staticDecision) {
      return this.decide(this.base.enabled ?? true, this.base.injectionRate ?? DEFAULT_INJECTION_RATE)
        ? this.inject(next, context)
        : next(context);
    }
    return this.dynamicDecision(context).then((inject) => (inject ? this.inject(next, context) : next(context)));
  }

  protected abstract inject(next: StrategyNext<T>, context: ResilienceContext): Promise<T>;

  private async dynamicDecision(context: ResilienceContext): Promise<boolean> {
    const enabled = this.base.enabledGenerator
      ? await this.base.enabledGenerator({ context })
      : (this.base.enabled ?? true);
    if (!enabled) return false;
    const rate = this.base.injectionRateGenerator
      ? await this.base.injectionRateGenerator({ context })
      : (this.base.injectionRate ?? DEFAULT_INJECTION_RATE);
    return this.decide(true, rate);
  }

  private decide(enabled: boolean, rate: number): boolean {
    return enabled && rate > 0 && (rate >= 1 || this.random() < rate);
  }
}

/** Throws a fault instead of calling. @internal */
export class ChaosFaultStrategy<T> extends ChaosStrategy<T> {
  constructor(
    private readonly options: ChaosFaultOptions,
    context: StrategyBuilderContext,
  ) {
    super(options, context);
  }

  protected async inject(_next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const fault = this.options.faultGenerator ? this.options.faultGenerator({ context }) : this.options.fault;
    this.telemetry.report('OnChaosInjected', 'information', context, { kind: 'fault' });
    if (this.options.onFaultInjected) await this.options.onFaultInjected({ context, fault });
    throw fault;
  }
}

/** Waits (cancellably) before calling. @internal */
export class ChaosLatencyStrategy<T> extends ChaosStrategy<T> {
  constructor(
    private readonly options: ChaosLatencyOptions,
    context: StrategyBuilderContext,
  ) {
    super(options, context);
  }

  protected async inject(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const latency = this.options.latencyGenerator
      ? await this.options.latencyGenerator({ context })
      : (this.options.latency ?? DEFAULT_CHAOS_LATENCY);
    if (latency > 0) {
      this.telemetry.report('OnChaosInjected', 'information', context, { kind: 'latency' });
      if (this.options.onLatencyInjected) await this.options.onLatencyInjected({ context, latency });
      await this.time.delay(latency, context.signal);
    }
    return next(context);
  }
}

/** Returns an outcome instead of calling. @internal */
export class ChaosOutcomeStrategy<T> extends ChaosStrategy<T> {
  constructor(
    private readonly options: ChaosOutcomeOptions<T>,
    context: StrategyBuilderContext,
  ) {
    super(options, context);
  }

  protected async inject(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const generated = this.options.outcomeGenerator ? this.options.outcomeGenerator({ context }) : this.options.outcome;
    const outcome = isThenable(generated) ? await generated : generated;
    if (!outcome) return next(context); // the generator declined this call
    this.telemetry.report('OnChaosInjected', 'information', context, { kind: 'outcome' });
    if (this.options.onOutcomeInjected) await this.options.onOutcomeInjected({ context, outcome });
    return unwrapOutcome(outcome);
  }
}

/** Runs a behaviour before calling. @internal */
export class ChaosBehaviorStrategy<T> extends ChaosStrategy<T> {
  constructor(
    private readonly options: ChaosBehaviorOptions,
    context: StrategyBuilderContext,
  ) {
    super(options, context);
  }

  protected async inject(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    this.telemetry.report('OnChaosInjected', 'information', context, { kind: 'behavior' });
    if (this.options.onBehaviorInjected) await this.options.onBehaviorInjected({ context });
    await this.options.behavior!({ context });
    return next(context);
  }
}
