/**
 * Holds a token response while it travels through the pipeline, so telemetry listeners and loggers
 * that see outcomes never see tokens: it serialises and prints as `[redacted]`.
 *
 * @internal
 */
export class Redacted<T> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  reveal(): T {
    return this.#value;
  }

  toJSON(): string {
    return '[redacted]';
  }

  toString(): string {
    return '[redacted]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[redacted]';
  }
}

/**
 * The RFC 6749 §4.1.2.1 character set of `error` and `error_description`: %x20-21 / %x23-5B / %x5D-7E
 * (printable ASCII without `"` and `\`).
 *
 * @publicApi
 */
export const OAUTH_ERROR_CHARSET = /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * A provider-supplied value fit to be shown or logged: characters that mean something in HTML
 * (`& < > '`) become entities, so it can never be echoed unescaped into a page.
 *
 * @publicApi
 */
export function escapeProviderValue(value: string): string {
  return value.replace(
    /[&<>']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', "'": '&#39;' })[c as '&' | '<' | '>' | "'"],
  );
}

/**
 * Why something failed, as an operator may read it: the error's class and code, never its message
 * body nor its `cause` (openid-client puts whole responses — tokens included — there).
 *
 * @internal
 */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code = (error as { code?: unknown }).code;
  const status = (error as { status?: unknown }).status ?? (error.cause as { status?: unknown } | undefined)?.status;
  return [
    error.name,
    typeof code === 'string' ? code : undefined,
    typeof status === 'number' ? `HTTP ${status}` : undefined,
  ]
    .filter(Boolean)
    .join(' ');
}
