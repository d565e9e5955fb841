import { Module } from '@nestjs/common';

/** The sample app's settings, read from the environment with embedded defaults. */
export interface SampleConfig {
  /** Retries after the first call to the weather upstream. */
  readonly weatherRetries: number;
  /** Base delay of the exponential backoff, in milliseconds. */
  readonly weatherRetryDelay: number;
  /** Per-attempt timeout, in milliseconds. */
  readonly weatherAttemptTimeout: number;
  /** Failed calls in a row that open the weather circuit. */
  readonly weatherFailureThreshold: number;
  /** How long the weather circuit stays open, in milliseconds. */
  readonly weatherBreakDuration: number;
}

export const SAMPLE_CONFIG = Symbol('SAMPLE_CONFIG');

export function sampleConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SampleConfig {
  const number = (name: string, fallback: number) => (env[name] === undefined ? fallback : Number(env[name]));
  return {
    weatherRetries: number('WEATHER_RETRIES', 3),
    weatherRetryDelay: number('WEATHER_RETRY_DELAY_MS', 200),
    weatherAttemptTimeout: number('WEATHER_ATTEMPT_TIMEOUT_MS', 2_000),
    weatherFailureThreshold: number('WEATHER_FAILURE_THRESHOLD', 6),
    weatherBreakDuration: number('WEATHER_BREAK_MS', 10_000),
  };
}

@Module({
  providers: [{ provide: SAMPLE_CONFIG, useFactory: () => sampleConfigFromEnv() }],
  exports: [SAMPLE_CONFIG],
})
export class SampleConfigModule {}
