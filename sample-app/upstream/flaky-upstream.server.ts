import { Inject, Injectable, Optional } from '@nestjs/common';
import { SteerableUpstream } from './steerable-upstream.server.js';
import { UPSTREAM_OPTIONS, upstreamOptionsFromEnv, type UpstreamOptions } from './upstream.options.js';

/**
 * The weather service the sample depends on (`GET /forecast/:city`), steerable through the control
 * route as `weather`. Starts in `transient` mode (two calls in three fail), so the tour shows retries;
 * calls for Atlantis fail in every mode (the fallback tour).
 */
@Injectable()
export class FlakyUpstreamServer extends SteerableUpstream {
  constructor(@Optional() @Inject(UPSTREAM_OPTIONS) options?: UpstreamOptions) {
    const { slowLatency, modes } = options ?? upstreamOptionsFromEnv();
    super({
      name: 'weather',
      description: 'the weather service behind /weather, /gateway and the RPC route',
      mode: modes.weather,
      slowLatency,
      key: ([city]) => city ?? '',
      answer: ([city]) => ({ status: 200, body: { city, temperature: 21, sky: 'clear' } }),
      alwaysFailing: (city) => city === 'atlantis',
    });
  }
}
