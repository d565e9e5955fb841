import { Controller } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { FlakyUpstreamServer } from '../upstream/flaky-upstream.server.js';

/** The weather upstream served over TCP as `weather.forecast` (the server side of the RPC piece). */
@Controller()
export class WeatherRpcController {
  constructor(private readonly upstream: FlakyUpstreamServer) {}

  @MessagePattern('weather.forecast')
  async forecast(@Payload() { city }: { city: string }): Promise<unknown> {
    const response = await fetch(`${this.upstream.baseUrl}/forecast/${encodeURIComponent(city)}`);
    if (!response.ok)
      throw new RpcException({ status: response.status, message: `upstream answered ${response.status}` });
    return response.json();
  }
}
