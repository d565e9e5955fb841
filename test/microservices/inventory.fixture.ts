import { Controller, Inject, Module, type DynamicModule } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { interval, map, take, type Observable } from 'rxjs';
import { TimeoutRejectedError, type TimeProvider } from '../../src/core.entry.js';
import { CircuitBreaker, ResilienceModule, Retry } from '../../src/nest/index.js';

/** What the inventory handlers did, and how they should behave; shared with the test. */
export class InventoryState {
  /** How many times `inventory.flaky` fails transiently before it answers. */
  flakyFailures = 0;
  /** `inventory.guarded` throws while this is set (which opens its circuit). */
  guardedFails = false;
  /** `inventory.decorated` fails this many times first (its own `@Retry` repeats it). */
  decoratedFailures = 0;
  readonly calls: Record<string, number> = {};
  readonly events: unknown[] = [];
  /** Resolvers of the `inventory.hang` calls still waiting. */
  readonly hanging: ((value: string) => void)[] = [];
  /** Whether the first `inventory.hang` call hangs (later ones answer at once). */
  hangFirstOnly = true;

  count(pattern: string): number {
    this.calls[pattern] = (this.calls[pattern] ?? 0) + 1;
    return this.calls[pattern];
  }

  releaseAll(): void {
    for (const resolve of this.hanging.splice(0)) resolve('late');
  }
}

export const INVENTORY_STATE = Symbol('InventoryState');

@Controller()
export class InventoryController {
  constructor(@Inject(INVENTORY_STATE) private readonly state: InventoryState) {}

  @MessagePattern('inventory.echo')
  echo(@Payload() data: unknown): unknown {
    this.state.count('inventory.echo');
    return { echo: data };
  }

  /** Fails transiently (its own downstream timed out → a 504 payload) `flakyFailures` times, then answers. */
  @MessagePattern('inventory.flaky')
  flaky(@Payload() data: { sku: string }): unknown {
    const n = this.state.count('inventory.flaky');
    if (n <= this.state.flakyFailures)
      throw new TimeoutRejectedError(50, { message: 'The stock service did not answer in time.' });
    return { sku: data.sku, reserved: true, attempt: n };
  }

  @MessagePattern('inventory.hang')
  hang(): Promise<string> | string {
    const n = this.state.count('inventory.hang');
    if (n > 1 && this.state.hangFirstOnly) return 'answered';
    return new Promise<string>((resolve) => this.state.hanging.push(resolve));
  }

  @MessagePattern('inventory.reject')
  reject(): never {
    this.state.count('inventory.reject');
    throw new RpcException({ code: 'OUT_OF_STOCK', message: 'No stock left for this SKU.' });
  }

  @MessagePattern('inventory.stream')
  stream(): Observable<number> {
    this.state.count('inventory.stream');
    return interval(1).pipe(
      take(3),
      map((i) => i + 1),
    );
  }

  /** Behind a circuit breaker (on the server's clock): throws while `guardedFails` is set. */
  @MessagePattern('inventory.guarded')
  @CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 5_000 })
  guarded(): unknown {
    this.state.count('inventory.guarded');
    if (this.state.guardedFails) throw new RpcException('stock database down');
    return { guarded: 'ok' };
  }

  /** Server-side decorators on a message handler: retried here, behind a breaker. */
  @MessagePattern('inventory.decorated')
  @Retry({ maxRetryAttempts: 2, delay: 0 })
  @CircuitBreaker({ kind: 'consecutive', failureThreshold: 5, breakDuration: 1_000 })
  decorated(): unknown {
    const n = this.state.count('inventory.decorated');
    if (n <= this.state.decoratedFailures) throw new Error(`flaky dependency (${n})`);
    return { decorated: n };
  }

  @EventPattern('inventory.restock')
  restock(@Payload() data: unknown): void {
    this.state.count('inventory.restock');
    this.state.events.push(data);
  }
}

/** The inventory service: its handlers, with the resilience module on `time`. */
@Module({})
export class InventoryModule {
  static register(state: InventoryState, time: TimeProvider): DynamicModule {
    return {
      module: InventoryModule,
      imports: [ResilienceModule.forRoot({ timeProvider: time })],
      controllers: [InventoryController],
      providers: [{ provide: INVENTORY_STATE, useValue: state }],
    };
  }
}
