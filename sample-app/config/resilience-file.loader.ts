import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, YAMLParseError } from 'yaml';
import {
  OptionsValidator,
  parseDuration,
  ResiliencePipelineRegistry,
  ResiliencePropertyKey,
  ResilienceValidationError,
  type PipelineConfigData,
  type ResilienceContext,
} from '../../src/index.js';
import { RPC_PREDICATES } from '../../src/nest/microservices/index.js';
import type { TokenRequestOptions } from '../../src/oauth/index.js';

/** The settings of the sample's resilience file, read and checked. */
export interface ResilienceFile {
  /** Where it was read from (absolute). */
  readonly path: string;
  /** The named pipelines as written (durations still as text), for comparing two versions of the file. */
  readonly pipelines: Readonly<Record<string, unknown>>;
  /** The `oauth.tokenRequests` settings, durations in milliseconds. */
  readonly tokenRequests: TokenRequestOptions;
}

/** Who is calling, for the limits marked `partitionBy: user`: set by the route that runs such a pipeline. */
export const CALLER = new ResiliencePropertyKey<string>('sample.caller');

/**
 * The predicates the file may name besides the built-in ones: the RPC client's (its module registers them
 * too, but only after the pipelines of the file are validated).
 */
export const SAMPLE_PREDICATES = RPC_PREDICATES;

const TOP_KEYS = ['pipelines', 'oauth'];
const TOKEN_REQUEST_DURATIONS = ['attemptTimeout', 'deadline', 'retryDelay', 'breakDuration'] as const;
const TOKEN_REQUEST_COUNTS = ['retries', 'breakerThreshold'] as const;
const PARTITIONS = ['user'];

/** The folder that holds package.json, from this file (in `sample-app/config` or `dist/sample-app/config`). */
export function projectRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}

/**
 * The file to read: `RESILIENCE_CONFIG` (relative to the working directory), else
 * `sample-app/config/resilience.yaml` of the project — the same from `npm start` and from the tests.
 */
export function resilienceFilePath(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.RESILIENCE_CONFIG;
  if (given !== undefined && given !== '') return isAbsolute(given) ? given : resolve(process.cwd(), given);
  return join(projectRoot(), 'sample-app', 'config', 'resilience.yaml');
}

/**
 * Reads and checks the file: YAML syntax, its shape, every pipeline (validated as the module validates
 * them, by a registry of its own) and the `oauth` section. One `ResilienceValidationError` lists every
 * problem.
 */
export async function readResilienceFile(path: string): Promise<ResilienceFile> {
  const v = new OptionsValidator('');
  const title = `Invalid resilience configuration in ${path}`;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    v.add('file', path, `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    throw new ResilienceValidationError(v.problems, title);
  }
  let doc: unknown;
  try {
    doc = parse(text, { prettyErrors: true });
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` at line ${error.linePos[0].line}` : '';
    v.add('file', path, `is not valid YAML${where}: ${(error as Error).message.split('\n')[0]}`);
    throw new ResilienceValidationError(v.problems, title);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    v.add('', doc, 'must be a mapping with "pipelines" (and optionally "oauth")');
    throw new ResilienceValidationError(v.problems, title);
  }
  const root = doc as Record<string, unknown>;
  v.knownKeys(root, TOP_KEYS);
  const pipelines = root.pipelines;
  if (typeof pipelines !== 'object' || pipelines === null || Array.isArray(pipelines)) {
    v.add('pipelines', pipelines, 'must be a mapping of pipeline names to their sections');
  } else {
    checkPartitions(pipelines as Record<string, unknown>, v);
    await checkPipelines(pipelines as Record<string, unknown>, v);
  }
  const tokenRequests = readTokenRequests(root.oauth, v.child('oauth'));
  v.throwIfInvalid(title);
  return { path, pipelines: pipelines as Record<string, unknown>, tokenRequests };
}

/**
 * The file's pipelines as the module takes them: a limit with `partitionBy: user` gets a `partitionKey`
 * that reads the caller the route put into the context (`CALLER`).
 */
export function modulePipelines(file: Pick<ResilienceFile, 'pipelines'>): Record<string, PipelineConfigData> {
  return Object.fromEntries(Object.entries(file.pipelines).map(([name, config]) => [name, withPartitions(config)]));
}

/** One pipeline of the file as the module takes it (see `modulePipelines`). */
export function withPartitions(config: unknown): PipelineConfigData {
  const data = config as Record<string, unknown>;
  const limiter = data.rateLimiter as Record<string, unknown> | undefined;
  if (typeof limiter !== 'object' || limiter === null || limiter.partitionBy === undefined) {
    return data;
  }
  const { partitionBy: _by, ...rest } = limiter;
  return { ...data, rateLimiter: { ...rest, partitionKey: callerOf } };
}

function callerOf(context: ResilienceContext): string {
  return (context.hasProperties ? context.properties.get(CALLER) : undefined) ?? 'unknown';
}

function checkPartitions(pipelines: Record<string, unknown>, v: OptionsValidator): void {
  for (const [name, config] of Object.entries(pipelines)) {
    const limiter = (config as { rateLimiter?: unknown } | null)?.rateLimiter as Record<string, unknown> | undefined;
    if (typeof limiter === 'object' && limiter !== null) {
      v.oneOf(`pipelines.${name}.rateLimiter.partitionBy`, limiter.partitionBy, PARTITIONS);
    }
  }
}

/** Validates the pipelines as `ResilienceModule` will: built once by a registry of their own, then dropped. */
async function checkPipelines(pipelines: Record<string, unknown>, v: OptionsValidator): Promise<void> {
  const scratch = new ResiliencePipelineRegistry({ predicates: SAMPLE_PREDICATES });
  try {
    scratch.addPipelines(modulePipelines({ pipelines }), v);
  } finally {
    await scratch.dispose();
  }
}

function readTokenRequests(oauth: unknown, v: OptionsValidator): TokenRequestOptions {
  if (oauth === undefined || oauth === null) return {};
  if (typeof oauth !== 'object' || Array.isArray(oauth)) {
    v.add('', oauth, 'must be a mapping with "tokenRequests"');
    return {};
  }
  v.knownKeys(oauth, ['tokenRequests']);
  const raw = (oauth as { tokenRequests?: unknown }).tokenRequests;
  if (raw === undefined || raw === null) return {};
  const t = v.child('tokenRequests');
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    t.add('', raw, 'must be a mapping');
    return {};
  }
  const given = raw as Record<string, unknown>;
  t.knownKeys(given, [...TOKEN_REQUEST_DURATIONS, ...TOKEN_REQUEST_COUNTS]);
  const result: Record<string, number> = {};
  for (const key of TOKEN_REQUEST_DURATIONS) {
    if (given[key] === undefined) continue;
    const ms = parseDuration(given[key]);
    const min = key === 'retryDelay' ? 0 : 1;
    if (ms === undefined || !Number.isFinite(ms) || ms < min) t.add(key, given[key], `must be a duration >= ${min} ms`);
    else result[key] = ms;
  }
  for (const key of TOKEN_REQUEST_COUNTS) {
    if (given[key] === undefined) continue;
    const n = typeof given[key] === 'string' ? Number(given[key]) : given[key];
    const min = key === 'retries' ? 0 : 1;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min)
      t.add(key, given[key], `must be a whole number >= ${min}`);
    else result[key] = n;
  }
  if (result.attemptTimeout !== undefined && result.deadline !== undefined && result.attemptTimeout > result.deadline) {
    t.add('attemptTimeout', given.attemptTimeout, `must not exceed the deadline (${result.deadline} ms)`);
  }
  return result;
}
