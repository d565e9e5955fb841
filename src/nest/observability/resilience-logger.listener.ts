import { Logger, type LoggerService } from '@nestjs/common';
import {
  OptionsValidator,
  systemTimeProvider,
  type ResilienceEvent,
  type ResilienceEventMap,
  type TelemetryListener,
  type TimeProvider,
} from '../../core/index.js';
import { describeOutcome } from '../../core/telemetry/outcome-description.util.js';

/** A Nest log level, or `false` to leave the event out. @publicApi */
export type ResilienceLogLevel = 'fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose' | false;

/** Options of the Nest `Logger` listener (`ResilienceModule`'s `logging`): levels, rate limit, error messages, logger. @publicApi */
export interface ResilienceLoggingOptions {
  /** The level of each event; events not listed keep their default (see `DEFAULT_RESILIENCE_LOG_LEVELS`). */
  levels?: Partial<Record<keyof ResilienceEventMap, ResilienceLogLevel>>;
  /**
   * At most `events` lines per circuit (pipeline, instance and strategy) every `per` milliseconds; the
   * rest are counted and reported in one line when the next period starts. `false` logs every event.
   * Default: 20 per 10 000 ms.
   */
  rateLimit?: { events: number; per: number } | false;
  /** Add error messages to the lines. Off by default: messages may carry hosts, keys or tokens. */
  includeErrorMessages?: boolean;
  /** The logger. Default: a Nest `Logger` with the context `Resilience`. */
  logger?: LoggerService;
  /** The clock of the rate limit. Default: the system clock. */
  timeProvider?: TimeProvider;
}

/**
 * The level of each event when nothing says otherwise: openings are errors, half-openings, retries,
 * timeouts and fallbacks warnings, closings plain log lines, rejections and hedges debug lines. The
 * per-call events (`PipelineExecuting`, `PipelineExecuted`, `ExecutionAttempt`) are off.
 *
 * @publicApi
 */
export const DEFAULT_RESILIENCE_LOG_LEVELS: Readonly<Record<keyof ResilienceEventMap, ResilienceLogLevel>> = {
  PipelineExecuting: false,
  PipelineExecuted: false,
  ExecutionAttempt: false,
  OnRetry: 'warn',
  OnRetryGiveUp: 'error',
  OnTimeout: 'warn',
  OnFallback: 'warn',
  OnCircuitOpened: 'error',
  OnCircuitHalfOpened: 'warn',
  OnCircuitClosed: 'log',
  OnCircuitRejected: 'debug',
  OnRateLimiterRejected: 'debug',
  OnAdaptiveLimitChanged: 'debug',
  OnAdaptiveThrottlingRejected: 'debug',
  OnHedging: 'debug',
  OnEndpointAttempt: 'debug',
  OnChaosInjected: 'debug',
  OnStateStoreUnavailable: 'error',
  OnStateStoreRestored: 'log',
};

const LEVELS = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;

interface Budget {
  periodStart: number;
  used: number;
  suppressed: number;
}

/**
 * Writes one log line per resilience event, at the level the event is configured for, rate-limited per
 * circuit so an outage cannot flood the log. Lines name the event, the pipeline, instance and strategy,
 * the operation key and the outcome's error type (never its message unless asked, never the context's
 * properties). `ResilienceModule` adds one unless `logging: false`.
 *
 * ```
 * [Resilience] OnCircuitOpened pipeline=orders strategy=circuit-breaker reason=failure-threshold breakDuration=30000ms failures=5/5 outcome=ECONNREFUSED Error
 * ```
 *
 * @publicApi
 */
export class ResilienceLoggerListener implements TelemetryListener {
  private readonly levels: Record<string, ResilienceLogLevel>;
  private readonly logger: LoggerService;
  private readonly time: TimeProvider;
  private readonly limit: { events: number; per: number } | false;
  private readonly includeMessages: boolean;
  private readonly budgets = new Map<string, Budget>();

  constructor(options: ResilienceLoggingOptions = {}) {
    validateLoggingOptions(options);
    this.levels = { ...DEFAULT_RESILIENCE_LOG_LEVELS, ...options.levels };
    this.logger = options.logger ?? new Logger('Resilience');
    this.time = options.timeProvider ?? systemTimeProvider;
    this.limit = options.rateLimit ?? { events: 20, per: 10_000 };
    this.includeMessages = options.includeErrorMessages ?? false;
  }

  /**
   * The events whose level is not `false` (per `levels` and `DEFAULT_RESILIENCE_LOG_LEVELS`): with the
   * defaults, state changes, retries, give-ups, timeouts, fallbacks and rejections, never the per-call
   * events, so the engine neither times nor builds those for the logger.
   */
  wants(eventName: keyof ResilienceEventMap): boolean {
    return Boolean(this.levels[eventName]);
  }

  /** Lines print the duration of `ExecutionAttempt` and `PipelineExecuted` only (when their levels turn them on). */
  wantsDuration(eventName: keyof ResilienceEventMap): boolean {
    return eventName === 'ExecutionAttempt' || eventName === 'PipelineExecuted';
  }

  write(event: ResilienceEvent): void {
    const level = this.levels[event.eventName];
    if (!level) return;
    const source = event.source;
    const circuit = `${source.pipelineName ?? '-'}/${source.pipelineInstanceName ?? '-'}/${source.strategyName ?? source.strategyType}`;
    const suppressed = this.admit(circuit);
    if (suppressed === undefined) return;
    if (suppressed > 0) {
      this.logger.warn(`${suppressed} resilience event(s) of ${circuit} were not logged (rate limit)`);
    }
    this.emit(level, this.format(event));
  }

  /** Undefined when the line must be dropped; otherwise how many lines were dropped before it. */
  private admit(circuit: string): number | undefined {
    if (!this.limit) return 0;
    const now = this.time.now();
    let budget = this.budgets.get(circuit);
    if (!budget) {
      if (this.budgets.size >= 10_000) this.budgets.clear(); // unbounded instance keys must not grow memory
      this.budgets.set(circuit, (budget = { periodStart: now, used: 0, suppressed: 0 }));
    }
    if (now - budget.periodStart >= this.limit.per) {
      budget.periodStart = now;
      budget.used = 0;
    }
    if (budget.used >= this.limit.events) {
      budget.suppressed++;
      return undefined;
    }
    budget.used++;
    const suppressed = budget.suppressed;
    budget.suppressed = 0;
    return suppressed;
  }

  private emit(level: Exclude<ResilienceLogLevel, false>, line: string): void {
    const logger = this.logger;
    switch (level) {
      case 'fatal':
        if (logger.fatal) logger.fatal(line);
        else logger.error(line);
        break;
      case 'error':
        logger.error(line);
        break;
      case 'warn':
        logger.warn(line);
        break;
      case 'log':
        logger.log(line);
        break;
      case 'debug':
        logger.debug?.(line);
        break;
      case 'verbose':
        logger.verbose?.(line);
        break;
    }
  }

  private format(event: ResilienceEvent): string {
    const { source, context } = event;
    const parts: string[] = [event.eventName];
    if (source.pipelineName !== undefined) parts.push(`pipeline=${source.pipelineName}`);
    if (source.pipelineInstanceName !== undefined) parts.push(`instance=${source.pipelineInstanceName}`);
    parts.push(`strategy=${source.strategyName ?? source.strategyType}`);
    if (context.operationKey !== undefined) parts.push(`operation=${context.operationKey}`);
    switch (event.eventName) {
      case 'OnRetry':
        parts.push(`attempt=${event.arguments.attemptNumber}`, `delay=${ms(event.arguments.retryDelay)}`);
        break;
      case 'OnRetryGiveUp':
        parts.push(`attempt=${event.arguments.attemptNumber}`, `reason=${event.arguments.reason}`);
        break;
      case 'OnTimeout':
        parts.push(`timeout=${ms(event.arguments.timeout)}`);
        break;
      case 'OnCircuitOpened': {
        const { reason, breakDuration, health } = event.arguments;
        parts.push(`reason=${reason}`, `breakDuration=${ms(breakDuration)}`);
        if (health) parts.push(`failures=${health.failures}/${health.throughput}`);
        break;
      }
      case 'OnCircuitClosed':
        parts.push(`reason=${event.arguments.reason}`);
        break;
      case 'OnCircuitRejected':
        parts.push(`state=${event.arguments.state}`);
        if (event.arguments.retryAfter !== undefined) parts.push(`retryAfter=${ms(event.arguments.retryAfter)}`);
        break;
      case 'OnRateLimiterRejected':
        if (event.arguments.reason === 'shed') parts.push('reason=shed');
        if (event.arguments.retryAfter !== undefined) parts.push(`retryAfter=${ms(event.arguments.retryAfter)}`);
        break;
      case 'OnAdaptiveThrottlingRejected': {
        const { rejectProbability, requests, accepts } = event.arguments;
        parts.push(`rejectProbability=${rejectProbability.toFixed(3)}`, `accepts=${accepts}/${requests}`);
        break;
      }
      case 'OnHedging':
        parts.push(`attempt=${event.arguments.attemptNumber}`);
        break;
      case 'OnChaosInjected':
        parts.push(`kind=${event.arguments.kind}`);
        break;
      case 'ExecutionAttempt':
        parts.push(
          `attempt=${event.arguments.attemptNumber}`,
          `handled=${event.arguments.handled}`,
          `duration=${ms(event.arguments.duration)}`,
        );
        break;
      case 'PipelineExecuted':
        parts.push(`duration=${ms(event.arguments.duration)}`);
        break;
      default:
        break;
    }
    const outcome = 'outcome' in event.arguments ? event.arguments.outcome : undefined;
    const error =
      event.eventName === 'OnStateStoreUnavailable' || event.eventName === 'OnStateStoreRestored'
        ? { ok: false as const, error: event.arguments.error }
        : outcome;
    if (error) parts.push(`outcome=${describeOutcome(error, this.includeMessages)}`);
    return parts.join(' ');
  }
}

function validateLoggingOptions(o: ResilienceLoggingOptions): void {
  const v = new OptionsValidator('logging');
  if (typeof o !== 'object' || o === null) {
    v.add('', o, 'must be an object or false').throwIfInvalid('Invalid resilience logging options');
  }
  v.knownKeys(o, ['levels', 'rateLimit', 'includeErrorMessages', 'logger', 'timeProvider']);
  for (const [name, level] of Object.entries(o.levels ?? {})) {
    if (!(name in DEFAULT_RESILIENCE_LOG_LEVELS)) v.add(`levels.${name}`, level, 'is not a resilience event name');
    else if (level !== false && !LEVELS.includes(level)) {
      v.add(`levels.${name}`, level, `must be false or one of ${LEVELS.join(', ')}`);
    }
  }
  if (o.rateLimit !== undefined && o.rateLimit !== false) {
    const r = o.rateLimit as Partial<{ events: unknown; per: unknown }>;
    if (typeof r.events !== 'number' || !Number.isInteger(r.events) || r.events < 1) {
      v.add('rateLimit.events', r.events, 'must be an integer >= 1');
    }
    if (typeof r.per !== 'number' || !(r.per > 0)) v.add('rateLimit.per', r.per, 'must be a number > 0');
  }
  v.throwIfInvalid('Invalid resilience logging options');
}

/** A duration in whole milliseconds, as log lines print it (`1750ms`, never `1750.0174295973072ms`). */
function ms(value: number): string {
  return `${Math.round(value)}ms`;
}
