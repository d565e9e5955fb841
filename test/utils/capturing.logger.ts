import type { LoggerService } from '@nestjs/common';

/** A Nest logger that keeps debug messages for assertions and drops the rest. */
export class CapturingLogger implements LoggerService {
  readonly debugs: string[] = [];
  log(): void {}
  error(): void {}
  warn(): void {}
  debug(message: string): void {
    this.debugs.push(message);
  }
}
