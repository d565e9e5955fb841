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

/** A Nest logger that keeps log and warn lines for assertions (outage and recovery messages). */
export class WarningLogger implements LoggerService {
  readonly warnings: string[] = [];
  readonly infos: string[] = [];
  log(message: string): void {
    this.infos.push(message);
  }
  warn(message: string): void {
    this.warnings.push(message);
  }
  error(): void {}
}
