import { registerAs } from '@nestjs/config';
import { readResilienceFile, resilienceFilePath, type ResilienceFile } from './resilience-file.loader.js';

/**
 * The `resilience` configuration namespace: `sample-app/config/resilience.yaml` (or the file
 * `RESILIENCE_CONFIG` names), read and validated when the application starts. Inject it with
 * `@Inject(resilienceConfig.KEY)`; `ConfigModule.forFeature(resilienceConfig)` provides it.
 */
export const resilienceConfig = registerAs('resilience', () => readResilienceFile(resilienceFilePath()));

/** What the `resilience` namespace holds. */
export type ResilienceConfig = ResilienceFile;
