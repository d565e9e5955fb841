import type { ResiliencePipelineRegistry } from '../../src/index.js';

/** A pipeline as the start-up table shows it: its name and its strategies, outermost first. */
export interface PipelineRow {
  readonly name: string;
  readonly strategies: readonly string[];
}

/** What the start-up text is made of. */
export interface StartupInfo {
  /** The app's base URL, e.g. `http://127.0.0.1:3000`. */
  readonly url: string;
  /** The TCP port the weather service is served on. */
  readonly rpcPort: number;
  /** The resilience file the pipelines came from. */
  readonly configFile: string;
  readonly pipelines: readonly PipelineRow[];
  /** Whether `ADMIN_TOKEN` is set (scripts may then call the admin API with it). */
  readonly adminToken: boolean;
  /** Where circuits and limits live: `memory`, or `redis`. */
  readonly store: 'memory' | 'redis';
  /** The process to send `SIGHUP` to. */
  readonly pid: number;
}

const RPC = 'RPC client';

/** The routes of the tour: what each shows, and its path. */
export const TOUR: readonly (readonly [string, string])[] = [
  ['retry, then live', '/weather/lisbon'],
  ['fallback after the retries', '/weather/atlantis'],
  ['open circuit: 503 + Retry-After', '/weather/atlantis/strict'],
  ['rate limit per user: 429', '/weather/lisbon/limited'],
  ['hedging on a slow replica', '/catalog/1'],
  ['resilient HTTP client', '/gateway/forecast/porto'],
  ['interceptor pipeline', '/upstream/status'],
  [RPC, '/rpc/weather/lisbon'],
];

/** The pipelines of the registry with their strategies in order (`describe()` of each). */
export function pipelineRows(registry: ResiliencePipelineRegistry): PipelineRow[] {
  return registry.pipelineNames.map((name) => ({
    name,
    strategies: registry
      .getPipeline(name)
      .describe()
      .map((s) => s.type),
  }));
}

/** Pads the cells of each column to one width: a plain table that stays aligned in any terminal. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The text printed when the sample has started: where to go, and the pipelines it runs. */
export function startupText(info: StartupInfo): string {
  const u = (path: string) => `${info.url}${path}`;
  const open: (readonly [string, string])[] = [
    ['app', u('/')],
    ['dashboard', u('/resilience/dashboard')],
    ['sign-in', u('/auth/login?returnTo=/resilience/dashboard')],
    ['health', u('/health')],
    ['metrics', u('/metrics')],
  ];
  const tour = TOUR.map(([what, path]) => [what === RPC ? `${what} (TCP :${info.rpcPort})` : what, u(path)] as const);
  const rows = info.pipelines.map((p) => [p.name, p.strategies.join(' → ') || '(none)']);
  return [
    `nest-resilience sample on ${info.url} (store: ${info.store})`,
    '',
    table(['open', 'url'], open),
    '',
    table(['tour', 'url'], tour),
    '',
    `Pipelines from ${info.configFile} (reload: kill -HUP ${info.pid}, or POST ${u('/admin/reload')}):`,
    table(['pipeline', 'strategies, outermost first'], rows),
    '',
    info.adminToken
      ? 'Admin API: sign in, or send Authorization: Bearer $ADMIN_TOKEN.'
      : 'Admin API: sign in (any user name at the built-in identity provider); set ADMIN_TOKEN for scripts.',
  ].join('\n');
}
