import { Controller, Get, Inject, Param, ServiceUnavailableException } from '@nestjs/common';
import {
  currentResilienceContext,
  remainingBudget,
  RESILIENCE_TIME_PROVIDER,
  UseResiliencePipeline,
  WithCriticality,
  type TimeProvider,
} from '../../src/index.js';
import { FlakyUpstreamServer } from '../upstream/flaky-upstream.server.js';

/** What the overload routes answer. */
export interface OverloadAnswer {
  readonly route: string;
  readonly served: true;
}

/** What `/overload/budget` answers: the caller's budget as the handler sees it. */
export interface BudgetAnswer {
  /** Milliseconds left before the caller's deadline, `null` when the request gave none. */
  readonly budgetMs: number | null;
}

/**
 * The overload features: the "overload" pipeline (adaptive concurrency limit, shedding by criticality),
 * the "throttled" pipeline (adaptive throttling in front of the weather upstream) and the caller's budget
 * (`RequestDeadlineInterceptor`, registered for the whole app).
 */
@Controller('overload')
export class OverloadController {
  /** How many times the budget handler ran (a spent budget is answered before it runs). */
  budgetCalls = 0;

  constructor(
    private readonly upstream: FlakyUpstreamServer,
    @Inject(RESILIENCE_TIME_PROVIDER) private readonly time: TimeProvider,
  ) {}

  /** Behind the adaptive limit as a `default` call; `x-criticality: sheddable` makes it sheddable (429). */
  @Get('orders')
  @UseResiliencePipeline('overload')
  orders(): OverloadAnswer {
    return { route: 'orders', served: true };
  }

  /** The same limit, `sheddable` by default (429); `x-criticality: critical` gets it through. */
  @Get('report')
  @UseResiliencePipeline('overload')
  @WithCriticality('sheddable')
  report(): OverloadAnswer {
    return { route: 'report', served: true };
  }

  /**
   * The weather upstream without retries, behind adaptive throttling: each 503 of the upstream is a
   * refusal; once refusals dominate, calls are turned away here (429) before they reach it.
   */
  @Get('weather/:city')
  @UseResiliencePipeline('throttled')
  async weather(@Param('city') city: string): Promise<unknown> {
    const signal = currentResilienceContext()?.signal;
    const response = await fetch(`${this.upstream.baseUrl}/forecast/${encodeURIComponent(city)}`, { signal });
    if (!response.ok) throw new ServiceUnavailableException('The weather upstream refused the call.');
    return response.json();
  }

  /** The caller's budget (`x-request-deadline-ms` or `grpc-timeout`) as the handler receives it. */
  @Get('budget')
  budget(): BudgetAnswer {
    this.budgetCalls++;
    const context = currentResilienceContext();
    return { budgetMs: (context && remainingBudget(context, this.time)) ?? null };
  }
}
