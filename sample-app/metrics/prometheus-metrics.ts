import { Controller, Get, Injectable, Module, Req, Res, type OnApplicationShutdown } from '@nestjs/common';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OpenTelemetryListener } from '../../src/opentelemetry/index.js';

/**
 * The sample's metrics: an OpenTelemetry `MeterProvider` whose reader is the Prometheus exporter (its own
 * server not started: `/metrics` of the app serves it), fed by the library's `OpenTelemetryListener`.
 */
@Injectable()
export class SampleMetrics implements OnApplicationShutdown {
  readonly exporter = new PrometheusExporter({ preventServerStart: true });
  readonly meterProvider = new MeterProvider({ readers: [this.exporter] });
  /** Give it to `ResilienceModule` as a telemetry listener. */
  readonly listener = new OpenTelemetryListener({ meterProvider: this.meterProvider, traces: false });

  async onApplicationShutdown(): Promise<void> {
    await this.meterProvider.shutdown();
  }
}

/** `GET /metrics`: the Prometheus text format (resilience events, attempt and pipeline durations, circuit states). */
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: SampleMetrics) {}

  @Get()
  scrape(
    @Req() req: { raw?: IncomingMessage } & IncomingMessage,
    @Res() res: { raw?: ServerResponse } & ServerResponse,
  ): void {
    this.metrics.exporter.getMetricsRequestHandler(req.raw ?? req, res.raw ?? res);
  }
}

@Module({ providers: [SampleMetrics], controllers: [MetricsController], exports: [SampleMetrics] })
export class SampleMetricsModule {}
