import { Header } from '@nestjs/common';

/**
 * The headers every OAuth callback answer and every OAuth error answer carries (RFC 9700 §4.2.4,
 * RFC 6749 §5.1): nothing is cached, and the callback URL (with its `code` and `state`) never leaks
 * through `Referer`.
 *
 * @publicApi
 */
export const OAUTH_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'Referrer-Policy': 'no-referrer',
});

/** Something that takes headers: Express' and Fastify's responses, Node's `ServerResponse`. @publicApi */
export interface HeaderSink {
  /** Node's and Express' way to set a header. */
  setHeader?(name: string, value: string): unknown;
  /** Fastify's way to set a header. */
  header?(name: string, value: string): unknown;
}

/** Sets `OAUTH_RESPONSE_HEADERS` on a response (for handlers that write their own answers). @publicApi */
export function setOAuthResponseHeaders(response: HeaderSink): void {
  for (const [name, value] of Object.entries(OAUTH_RESPONSE_HEADERS)) {
    if (typeof response.setHeader === 'function') response.setHeader(name, value);
    else response.header?.(name, value);
  }
}

/**
 * Puts `OAUTH_RESPONSE_HEADERS` on a route's answers — redirects included. On a controller class, on
 * every route of it. Errors get them from `OAuthExceptionFilter`. Use it on the callback and on every
 * route that hands out session state.
 *
 * @publicApi
 */
export function OAuthResponseHeaders(): MethodDecorator & ClassDecorator {
  const headers = Object.entries(OAUTH_RESPONSE_HEADERS).map(([name, value]) => Header(name, value));
  const onMethod = (target: object, key: string | symbol, descriptor: PropertyDescriptor) => {
    for (const header of headers) header(target, key, descriptor);
  };
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (key !== undefined && descriptor !== undefined) {
      onMethod(target, key, descriptor);
      return;
    }
    const prototype = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const method = Object.getOwnPropertyDescriptor(prototype, name);
      if (name !== 'constructor' && typeof method?.value === 'function') onMethod(prototype, name, method);
    }
  };
}
