import type { OptionsValidator } from '../../core/index.js';
import { NEST_RULES } from '../resilience.messages.js';

/** One endpoint of a group: its base URL (scheme, host, port and an optional path prefix). @publicApi */
export interface HedgingEndpoint {
  /** The endpoint's base URL. */
  readonly url: string;
  /** Relative weight within its group (default 1). */
  readonly weight?: number;
}

/** Endpoints one attempt may go to; an attempt picks one of them by weight. @publicApi */
export interface EndpointGroup {
  /** The group's endpoints: base URLs, or endpoints with a weight. */
  readonly endpoints: readonly (string | HedgingEndpoint)[];
  /** Relative weight of the group (weighted routing only; default 1). */
  readonly weight?: number;
}

/**
 * How the attempts of one request are spread over endpoint groups; each attempt goes to another group.
 * `ordered`: the primary attempt to the first group, each hedge to the next (Microsoft's
 * `ConfigureOrderedGroups`). `weighted`: groups in random order by weight (`ConfigureWeightedGroups`).
 *
 * @publicApi
 */
export interface EndpointRouting {
  /** `ordered` (default) or `weighted`. */
  readonly kind?: 'ordered' | 'weighted';
  /** The endpoint groups; each attempt of a request goes to another one. */
  readonly groups: readonly EndpointGroup[];
}

/** An endpoint as routing sees it: its URL, parsed, and the authority that names it. @publicApi */
export interface RoutedEndpoint {
  /** The endpoint's base URL, parsed. */
  readonly url: URL;
  /** `scheme://host:port`: the endpoint's name in telemetry and its circuit's key. */
  readonly authority: string;
  /** Its relative weight within its group. */
  readonly weight: number;
}

interface RoutedGroup {
  readonly weight: number;
  readonly endpoints: readonly RoutedEndpoint[];
  readonly totalWeight: number;
}

/**
 * Plans the endpoints of one request: one endpoint per group, groups in the routing's order (ordered)
 * or drawn by weight without replacement (weighted), the endpoint of a group drawn by weight.
 *
 * @publicApi
 */
export class EndpointRouter {
  private readonly groups: readonly RoutedGroup[];
  private readonly weighted: boolean;

  constructor(
    routing: EndpointRouting,
    private readonly random: () => number = Math.random,
  ) {
    this.weighted = routing.kind === 'weighted';
    this.groups = routing.groups.map((group) => {
      const endpoints = group.endpoints.map((e) => toRoutedEndpoint(e));
      return { weight: group.weight ?? 1, endpoints, totalWeight: endpoints.reduce((s, e) => s + e.weight, 0) };
    });
  }

  /** Every endpoint of every group, once. */
  get endpoints(): readonly RoutedEndpoint[] {
    return this.groups.flatMap((g) => g.endpoints);
  }

  /** The endpoints the attempts of one request go to, in order: one per group. */
  plan(): RoutedEndpoint[] {
    const groups = this.weighted ? this.drawGroups() : this.groups;
    return groups.map((g) => this.pick(g));
  }

  private drawGroups(): RoutedGroup[] {
    const left = [...this.groups];
    const order: RoutedGroup[] = [];
    while (left.length > 0) {
      const i = draw(
        left.map((g) => g.weight),
        left.reduce((s, g) => s + g.weight, 0),
        this.random,
      );
      order.push(left.splice(i, 1)[0]);
    }
    return order;
  }

  private pick(group: RoutedGroup): RoutedEndpoint {
    if (group.endpoints.length === 1) return group.endpoints[0];
    return group.endpoints[
      draw(
        group.endpoints.map((e) => e.weight),
        group.totalWeight,
        this.random,
      )
    ];
  }
}

/** The index drawn by `weights` with `random` in [0, 1). */
function draw(weights: readonly number[], total: number, random: () => number): number {
  let r = random() * total;
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i];
    if (r < 0) return i;
  }
  return weights.length - 1;
}

function toRoutedEndpoint(endpoint: string | HedgingEndpoint): RoutedEndpoint {
  const spec = typeof endpoint === 'string' ? { url: endpoint } : endpoint;
  const url = new URL(spec.url);
  return { url, authority: `${url.protocol}//${url.host}`, weight: spec.weight ?? 1 };
}

/** Checks a routing: at least one group, each with endpoints, absolute http(s) URLs, positive weights. @internal */
export function validateEndpointRouting(parent: OptionsValidator, key: string, routing: unknown): void {
  if (typeof routing !== 'object' || routing === null) {
    parent.add(key, routing, NEST_RULES.objectWithGroups);
    return;
  }
  const v = parent.child(key);
  const r = routing as Partial<EndpointRouting>;
  v.knownKeys(r, ['kind', 'groups']).oneOf('kind', r.kind, ['ordered', 'weighted']);
  if (!Array.isArray(r.groups) || r.groups.length === 0) {
    v.add('groups', r.groups, NEST_RULES.endpointGroups);
    return;
  }
  r.groups.forEach((group: Partial<EndpointGroup>, i) => {
    if (typeof group !== 'object' || group === null) {
      v.add(`groups[${i}]`, group, NEST_RULES.objectWithEndpoints);
      return;
    }
    const gv = v.child(`groups[${i}]`);
    gv.knownKeys(group, ['endpoints', 'weight']).number('weight', group.weight, { min: 0, exclusiveMin: true });
    if (!Array.isArray(group.endpoints) || group.endpoints.length === 0) {
      gv.add('endpoints', group.endpoints, NEST_RULES.endpoints);
      return;
    }
    group.endpoints.forEach((endpoint: string | Partial<HedgingEndpoint>, j) => {
      const path = `endpoints[${j}]`;
      const spec = typeof endpoint === 'string' ? { url: endpoint } : endpoint;
      if (typeof spec !== 'object' || spec === null) {
        gv.add(path, endpoint, NEST_RULES.endpoint);
        return;
      }
      if (typeof endpoint === 'string') {
        if (!isHttpUrl(endpoint)) gv.add(path, endpoint, RULE_HTTP_URL);
        return;
      }
      const ev = gv.child(path);
      ev.knownKeys(endpoint, ['url', 'weight']).number('weight', endpoint.weight, { min: 0, exclusiveMin: true });
      if (!isHttpUrl(endpoint.url)) ev.add('url', endpoint.url, RULE_HTTP_URL);
    });
  });
}

const RULE_HTTP_URL = NEST_RULES.absoluteHttpUrl;

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
