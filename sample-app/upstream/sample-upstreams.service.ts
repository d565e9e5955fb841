import { Injectable } from '@nestjs/common';
import { CatalogPrimaryServer, CatalogReplicaServer } from './catalog-upstream.servers.js';
import { FlakyUpstreamServer } from './flaky-upstream.server.js';
import type { SteerableUpstream } from './steerable-upstream.server.js';

/** Every steerable upstream of the sample, by name. */
@Injectable()
export class SampleUpstreams {
  private readonly byName: ReadonlyMap<string, SteerableUpstream>;

  constructor(
    weather: FlakyUpstreamServer,
    catalogPrimary: CatalogPrimaryServer,
    catalogReplica: CatalogReplicaServer,
  ) {
    this.byName = new Map([weather, catalogPrimary, catalogReplica].map((u) => [u.name, u]));
  }

  /** In a fixed order: weather, catalog-primary, catalog-replica. */
  all(): readonly SteerableUpstream[] {
    return [...this.byName.values()];
  }

  find(name: string): SteerableUpstream | undefined {
    return this.byName.get(name);
  }
}
