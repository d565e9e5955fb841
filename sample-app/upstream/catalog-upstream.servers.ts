import { Inject, Injectable, Optional } from '@nestjs/common';
import { SteerableUpstream, type UpstreamReply } from './steerable-upstream.server.js';
import { UPSTREAM_OPTIONS, upstreamOptionsFromEnv, type UpstreamOptions } from './upstream.options.js';

/** A catalog item as both catalog servers answer it (`GET /items/:id`). */
export interface CatalogItem {
  readonly id: string;
  readonly name: string;
  /** Which server answered. */
  readonly servedBy: 'primary' | 'replica';
}

function item(servedBy: CatalogItem['servedBy']): (segments: readonly string[]) => UpstreamReply {
  return ([id = '']) => ({ status: 200, body: { id, name: `item ${id}`, servedBy } satisfies CatalogItem });
}

/** The catalog's primary server, steerable as `catalog-primary`. Starts `slow`, so `/catalog/:id` hedges. */
@Injectable()
export class CatalogPrimaryServer extends SteerableUpstream {
  constructor(@Optional() @Inject(UPSTREAM_OPTIONS) options?: UpstreamOptions) {
    const { slowLatency, modes } = options ?? upstreamOptionsFromEnv();
    super({
      name: 'catalog-primary',
      description: 'the catalog server /catalog asks first',
      mode: modes['catalog-primary'],
      slowLatency,
      key: ([id]) => id ?? '',
      answer: item('primary'),
    });
  }
}

/** The catalog's replica, steerable as `catalog-replica`: the hedged attempt of `/catalog/:id` goes here. */
@Injectable()
export class CatalogReplicaServer extends SteerableUpstream {
  constructor(@Optional() @Inject(UPSTREAM_OPTIONS) options?: UpstreamOptions) {
    const { slowLatency, modes } = options ?? upstreamOptionsFromEnv();
    super({
      name: 'catalog-replica',
      description: 'the catalog replica /catalog hedges to after 100 ms (or at once when the primary fails)',
      mode: modes['catalog-replica'],
      slowLatency,
      key: ([id]) => id ?? '',
      answer: item('replica'),
    });
  }
}
