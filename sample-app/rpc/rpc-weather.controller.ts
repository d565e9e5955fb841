import { Controller, Get, HttpException, Param } from '@nestjs/common';
import { lastValueFrom } from 'rxjs';
import { isResilienceError } from '../../src/index.js';
import {
  InjectResilientClient,
  isRemoteRpcError,
  type ResilientClientProxy,
} from '../../src/nest/microservices/index.js';

/**
 * An HTTP route that asks the weather service over TCP, through the resilient client: retried while the
 * upstream answers 503, 503 with Retry-After once the client's circuit is open.
 */
@Controller('rpc/weather')
export class RpcWeatherController {
  constructor(@InjectResilientClient('weather') private readonly weather: ResilientClientProxy) {}

  @Get(':city')
  async forecast(@Param('city') city: string): Promise<unknown> {
    try {
      return await lastValueFrom(this.weather.send('weather.forecast', { city }));
    } catch (error) {
      if (isResilienceError(error) || !isRemoteRpcError(error)) throw error; // mapped by the global filter
      const { status, message } = error as { status?: unknown; message?: unknown };
      throw new HttpException(String(message), typeof status === 'number' ? status : 502);
    }
  }
}
