import { BadGatewayException, Injectable } from '@nestjs/common';
import { ResiliencePipelineRegistry } from '../../src/index.js';
import { CatalogPrimaryServer, CatalogReplicaServer, type CatalogItem } from '../upstream/catalog-upstream.servers.js';
import type { SteerableUpstream } from '../upstream/steerable-upstream.server.js';

/** A catalog item and how long the hedged call took. */
export interface CatalogAnswer extends CatalogItem {
  /** Milliseconds from the first attempt to the accepted answer. */
  readonly tookMs: number;
}

/** A non-2xx answer of a catalog server. */
export class CatalogUpstreamError extends Error {
  constructor(readonly status: number) {
    super(`catalog server answered ${status}`);
    this.name = 'CatalogUpstreamError';
  }
}

/**
 * Reads the catalog through the "catalog" pipeline (hedging): the first attempt goes to the primary; when
 * it has not answered within the hedging delay (100 ms), or failed, the hedged attempt goes to the
 * replica; the first good answer wins and the other attempt is cancelled.
 */
@Injectable()
export class CatalogService {
  constructor(
    private readonly registry: ResiliencePipelineRegistry,
    private readonly primary: CatalogPrimaryServer,
    private readonly replica: CatalogReplicaServer,
  ) {}

  async item(id: string): Promise<CatalogAnswer> {
    const started = performance.now();
    try {
      const item = await this.registry.getPipeline('catalog').execute(async (context) => {
        const server: SteerableUpstream = context.attemptNumber === 0 ? this.primary : this.replica;
        const response = await fetch(`${server.baseUrl}/items/${encodeURIComponent(id)}`, { signal: context.signal });
        if (!response.ok) throw new CatalogUpstreamError(response.status);
        return (await response.json()) as CatalogItem;
      });
      return { ...item, tookMs: Math.round(performance.now() - started) };
    } catch (error) {
      if (error instanceof CatalogUpstreamError) throw new BadGatewayException('No catalog server answered.');
      throw error;
    }
  }
}
