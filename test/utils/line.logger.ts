import type { LoggerService } from '@nestjs/common';

/** One captured log line. */
export interface LogLine {
  readonly level: 'error' | 'warn' | 'log' | 'debug' | 'verbose' | 'fatal';
  /** The line's stable code (its first word when it looks like `OAUTH_…`). */
  readonly code: string | undefined;
  readonly text: string;
}

/** Keeps every line it is given (as a Nest logger or an `OAuthLogger`), with its level and code. */
export class LineLogger implements LoggerService {
  readonly lines: LogLine[] = [];

  error(message: unknown, ...rest: unknown[]): void {
    this.add('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.add('warn', message, rest);
  }
  log(message: unknown, ...rest: unknown[]): void {
    this.add('log', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.add('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.add('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.add('fatal', message, rest);
  }

  /** The lines naming this correlation id, in order. */
  withCorrelation(id: string): LogLine[] {
    return this.lines.filter((l) => l.text.includes(`correlationId=${id}`));
  }

  private add(level: LogLine['level'], message: unknown, rest: unknown[]): void {
    const text = [message, ...rest]
      .map((part) =>
        typeof part === 'string'
          ? part
          : part instanceof Error
            ? `${part.message} ${part.stack}`
            : JSON.stringify(part),
      )
      .join(' ');
    this.lines.push({ level, code: /^(OAUTH_[A-Z_]+)/.exec(text)?.[1], text });
  }
}
