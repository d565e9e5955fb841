// The code under test: a Nest service whose method retries and goes through the `inventory` circuit,
// calling an upstream the application provides.
import { Injectable, Module } from '@nestjs/common';
import { CircuitBreaker, ResilienceModule, Retry } from 'nest-resilience';

/** The upstream: whatever answers how many items are in stock. */
export abstract class InventoryApi {
  abstract count(sku: string): Promise<number>;
}

/** The real one, over HTTP (tests replace it). */
@Injectable()
export class HttpInventoryApi extends InventoryApi {
  async count(sku: string): Promise<number> {
    const response = await fetch(`${process.env.INVENTORY_URL}/stock/${encodeURIComponent(sku)}`);
    if (!response.ok) throw new Error(`inventory answered ${response.status}`);
    return ((await response.json()) as { count: number }).count;
  }
}

@Injectable()
export class StockService {
  // Injected by its type: the constructor's parameter types are emitted as metadata.
  constructor(private readonly inventory: InventoryApi) {}

  @Retry({ maxRetryAttempts: 2, backoffType: 'constant', delay: 500, useJitter: false })
  @CircuitBreaker('inventory')
  async inStock(sku: string): Promise<boolean> {
    return (await this.inventory.count(sku)) > 0;
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      pipelines: { inventory: { circuitBreaker: { kind: 'consecutive', failureThreshold: 3, breakDuration: '30s' } } },
      logging: false,
    }),
  ],
  providers: [StockService, { provide: InventoryApi, useClass: HttpInventoryApi }],
  exports: [StockService],
})
export class StockModule {}
