import type { TimeProvider } from '../core/index.js';
import { describeError } from './redis.util.js';

/** Something that logs (Nest's `Logger`, `console`, pino…). @publicApi */
export interface StoreLogger {
  warn(message: string): void;
  log?(message: string): void;
}

/**
 * Whether Redis may be asked: after a failure it is left alone for `retryInterval`; each outage and each
 * recovery is logged once and reported once. Shared by every Redis-backed part, so they behave alike.
 *
 * @internal
 */
export class RedisAvailability {
  private unavailableUntil = 0;
  private down = false;

  constructor(
    private readonly options: {
      /** Names the part in log lines, e.g. `Redis circuit-breaker store`. */
      readonly what: string;
      readonly outageMode: string;
      readonly retryInterval: number;
      readonly time: TimeProvider;
      readonly logger: StoreLogger;
      readonly onChange?: (available: boolean, error?: unknown) => void;
    },
  ) {}

  /** True from a failure until Redis answers again. */
  get isDegraded(): boolean {
    return this.down;
  }

  /** True while Redis is to be left alone (the outage mode answers instead). */
  get skip(): boolean {
    return this.down && this.options.time.now() < this.unavailableUntil;
  }

  /** Milliseconds until Redis will be tried again. */
  retryAfter(now: number): number {
    return Math.max(1, this.unavailableUntil - now);
  }

  /** Records a failure; the first of an outage is logged and reported. */
  failed(error: unknown): void {
    this.unavailableUntil = this.options.time.now() + this.options.retryInterval;
    if (this.down) return;
    this.down = true;
    this.options.logger.warn(
      `${this.options.what} unavailable (${describeError(error)}); using the "${this.options.outageMode}" outage mode until it is back.`,
    );
    this.options.onChange?.(false, error);
  }

  /** Records an answer; the one that ends an outage is logged and reported. */
  answered(): void {
    if (!this.down) return;
    this.down = false;
    const logger = this.options.logger;
    (logger.log ?? logger.warn).call(logger, `${this.options.what} is back.`);
    this.options.onChange?.(true);
  }
}
