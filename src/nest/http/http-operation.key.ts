/**
 * The operation key of a request of a resilient HTTP client, bounded by construction: the client's name,
 * the method and the request's route template when it gives one (`catalog GET /products/{id}`), else the
 * host it goes to (`catalog GET catalog.internal`) — never a path or a query value. Without a host (the
 * hedging handler's requests, whose endpoints decide it) the key is `catalog GET`.
 *
 * @internal
 */
export function httpOperationKey(
  client: string,
  method: string,
  url: string,
  routeTemplate: string | undefined,
): string {
  if (routeTemplate !== undefined) return `${client} ${method} ${withoutQuery(routeTemplate)}`;
  const host = hostOf(url);
  return host === undefined ? `${client} ${method}` : `${client} ${method} ${host}`;
}

/** A template's path only: a query string or fragment given with it is left out. */
function withoutQuery(template: string): string {
  const end = template.search(/[?#]/);
  return end === -1 ? template : template.slice(0, end);
}

/** `host[:port]` of an absolute URL (no credentials, path or query); `undefined` for a relative one. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}
