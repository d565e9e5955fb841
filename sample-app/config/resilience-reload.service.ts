import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { basename } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ResiliencePipelineRegistry } from '../../src/index.js';
import { resilienceConfig, type ResilienceConfig } from './resilience.config.js';
import { readResilienceFile, withPartitions } from './resilience-file.loader.js';

/** What a reload did. */
export interface ReloadReport {
  /** The file's name. */
  readonly file: string;
  /** Pipelines whose options changed: every holder switched to them; circuits kept their state. */
  readonly reloaded: string[];
  /** Pipelines new in the file, registered now. */
  readonly added: string[];
  /** Pipelines the file still has as they were. */
  readonly unchanged: string[];
  /** Pipelines no longer in the file: they keep running as they were until the next start. */
  readonly removed: string[];
  /** Sections that changed but are read at start-up only (`oauth.tokenRequests`). */
  readonly restartRequired: string[];
}

/** Stable codes of the reload's log lines. */
export const RELOAD_LOG = {
  reloaded: 'SAMPLE_CONFIG_RELOADED',
  rejected: 'SAMPLE_CONFIG_RELOAD_REJECTED',
} as const;

/**
 * Re-reads the resilience file on `SIGHUP` (and on `POST /admin/reload`) and applies each pipeline with
 * `registry.reload`, so circuits keep their state. The whole file is validated first: an invalid one is
 * refused with its problems and the running pipelines stay as they are.
 */
@Injectable()
export class ResilienceConfigReloader implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ResilienceConfig');
  private current: ResilienceConfig;
  /** Reloads run one after the other. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly onSignal = (): void => {
    this.reload().catch(() => undefined); // logged by reload
  };

  constructor(
    @Inject(resilienceConfig.KEY) initial: ResilienceConfig,
    private readonly registry: ResiliencePipelineRegistry,
  ) {
    this.current = initial;
  }

  /** The file the pipelines come from. */
  get path(): string {
    return this.current.path;
  }

  /** Resolves once every reload asked for so far (by a signal too) has finished. */
  get settled(): Promise<void> {
    return this.queue.then(() => undefined);
  }

  onApplicationBootstrap(): void {
    process.on('SIGHUP', this.onSignal);
  }

  onApplicationShutdown(): void {
    process.off('SIGHUP', this.onSignal);
  }

  /** Reads the file again and applies it; rejects with its `ResilienceValidationError` when it is invalid. */
  reload(): Promise<ReloadReport> {
    const run = this.queue.then(() => this.apply());
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async apply(): Promise<ReloadReport> {
    let next: ResilienceConfig;
    try {
      next = await readResilienceFile(this.current.path);
    } catch (error) {
      this.logger.error(`${RELOAD_LOG.rejected} the running pipelines stay: ${(error as Error).message}`);
      throw error;
    }
    const report: ReloadReport = {
      file: basename(next.path),
      reloaded: [],
      added: [],
      unchanged: [],
      removed: Object.keys(this.current.pipelines).filter((name) => !Object.hasOwn(next.pipelines, name)),
      restartRequired: isDeepStrictEqual(next.tokenRequests, this.current.tokenRequests) ? [] : ['oauth.tokenRequests'],
    };
    const kept = { ...this.current.pipelines };
    for (const [name, data] of Object.entries(next.pipelines)) {
      if (!this.registry.pipelineNames.includes(name)) {
        this.registry.addPipelines({ [name]: withPartitions(data) });
        report.added.push(name);
      } else if (Object.hasOwn(kept, name) && isDeepStrictEqual(kept[name], data)) {
        report.unchanged.push(name);
      } else {
        await this.registry.reload(name, withPartitions(data));
        report.reloaded.push(name);
      }
      kept[name] = data;
    }
    this.current = { ...next, pipelines: kept, tokenRequests: this.current.tokenRequests };
    this.logger.log(
      `${RELOAD_LOG.reloaded} from ${report.file}: reloaded [${report.reloaded.join(', ')}], added [${report.added.join(', ')}]` +
        (report.removed.length ? `, no longer in the file (kept until restart) [${report.removed.join(', ')}]` : '') +
        (report.restartRequired.length ? `, read at start-up only [${report.restartRequired.join(', ')}]` : ''),
    );
    return report;
  }
}
