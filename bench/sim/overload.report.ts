import type { PolicyResult, ScenarioOptions } from './overload.scenario.js';

/** The markers around the generated part of docs/overload.md. */
export const TABLE_START = '<!-- overload-table:start -->';
export const TABLE_END = '<!-- overload-table:end -->';

const HEADER = [
  'policy',
  'goodput during the trigger',
  'share of capacity',
  'amplification',
  'p99 latency',
  'recovery after the trigger',
];

/** The table of results, its cells padded as Prettier pads them. */
export function resultTable(results: readonly PolicyResult[], scenario: ScenarioOptions): string {
  const end = scenario.duration - scenario.dependency.trigger.start - scenario.dependency.trigger.duration;
  const rows = results.map((r) => [
    r.name,
    `${r.goodput.toFixed(1)} req/s`,
    `${Math.round(r.goodputShare * 100)} %`,
    `${r.amplification.toFixed(2)}×`,
    `${Math.round(r.p99)} ms`,
    r.recovery === undefined ? `never (within ${end / 1_000} s)` : `${(r.recovery / 1_000).toFixed(2)} s`,
  ]);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(HEADER), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** `page` with the text between the markers replaced by `generated`. */
export function replaceBetweenMarkers(page: string, generated: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`the page has no ${TABLE_START} … ${TABLE_END} block`);
  return `${page.slice(0, start + TABLE_START.length)}\n\n${generated}\n\n${page.slice(end)}`;
}

const PANEL_WIDTH = 440;
const PANEL_HEIGHT = 150;
const MARGIN = { left: 44, right: 12, top: 26, bottom: 24 };
const CELL_WIDTH = PANEL_WIDTH + MARGIN.left + MARGIN.right;
const CELL_HEIGHT = PANEL_HEIGHT + MARGIN.top + MARGIN.bottom;
const LEGEND_HEIGHT = 34;
const SERIES = [
  { key: 'capacity', label: 'dependency capacity', color: '#9e9e9e', dash: '5 4' },
  { key: 'offered', label: 'offered by callers', color: '#5c6bc0', dash: '2 3' },
  { key: 'load', label: 'attempts at the dependency', color: '#e65100', dash: '' },
  { key: 'goodput', label: 'goodput (in time)', color: '#2e7d32', dash: '' },
] as const;

/** Small multiples, one panel per policy: goodput and dependency load over simulated time. */
export function timelineChart(results: readonly PolicyResult[], scenario: ScenarioOptions): string {
  const columns = 2;
  const rows = Math.ceil(results.length / columns);
  const width = columns * CELL_WIDTH;
  const height = LEGEND_HEIGHT + rows * CELL_HEIGHT;
  const smoothed = results.map((r) => ({
    name: r.name,
    capacity: r.timeline.capacity,
    offered: movingAverage(r.timeline.offered, 4),
    load: movingAverage(r.timeline.load, 4),
    goodput: movingAverage(r.timeline.goodput, 4),
  }));
  const top = niceCeiling(Math.max(...smoothed.flatMap((s) => [...s.load, ...s.offered, ...s.capacity])));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    ...SERIES.map(
      (s, i) =>
        `<line x1="${12 + i * 200}" y1="18" x2="${36 + i * 200}" y2="18" stroke="${s.color}" stroke-width="2"${dash(s.dash)}/>` +
        `<text x="${42 + i * 200}" y="22">${s.label}</text>`,
    ),
  ];
  smoothed.forEach((series, index) => {
    const x0 = (index % columns) * CELL_WIDTH + MARGIN.left;
    const y0 = LEGEND_HEIGHT + Math.floor(index / columns) * CELL_HEIGHT + MARGIN.top;
    parts.push(panel(series, x0, y0, top, scenario));
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

type Smoothed = Record<(typeof SERIES)[number]['key'], number[]> & { name: string };

function panel(series: Smoothed, x0: number, y0: number, top: number, scenario: ScenarioOptions): string {
  const { duration, bucket } = scenario;
  const { trigger } = scenario.dependency;
  const x = (ms: number): number => x0 + (ms / duration) * PANEL_WIDTH;
  const y = (rate: number): number => y0 + PANEL_HEIGHT - (Math.min(rate, top) / top) * PANEL_HEIGHT;
  const out = [
    `<text x="${x0}" y="${y0 - 8}" font-weight="bold">${escapeXml(series.name)}</text>`,
    `<rect x="${fmt(x(trigger.start))}" y="${y0}" width="${fmt(x(trigger.start + trigger.duration) - x(trigger.start))}" height="${PANEL_HEIGHT}" fill="#fff3e0"/>`,
    `<rect x="${x0}" y="${y0}" width="${PANEL_WIDTH}" height="${PANEL_HEIGHT}" fill="none" stroke="#bdbdbd"/>`,
  ];
  for (let rate = 0; rate <= top; rate += top / 4) {
    out.push(
      `<line x1="${x0}" y1="${fmt(y(rate))}" x2="${x0 + PANEL_WIDTH}" y2="${fmt(y(rate))}" stroke="#eeeeee"/>`,
      `<text x="${x0 - 4}" y="${fmt(y(rate) + 4)}" text-anchor="end">${rate}</text>`,
    );
  }
  for (let s = 0; s <= duration; s += 5_000) {
    out.push(`<text x="${fmt(x(s))}" y="${y0 + PANEL_HEIGHT + 14}" text-anchor="middle">${s / 1_000} s</text>`);
  }
  for (const s of SERIES) {
    const points = series[s.key].map((v, i) => `${fmt(x((i + 0.5) * bucket))},${fmt(y(v))}`).join(' ');
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="1.5"${dash(s.dash)} points="${points}"/>`);
  }
  return out.join('\n');
}

function movingAverage(values: readonly number[], width: number): number[] {
  return values.map((_, i) => {
    const from = Math.max(0, i - Math.floor(width / 2));
    const to = Math.min(values.length, from + width);
    let sum = 0;
    for (let j = from; j < to; j++) sum += values[j];
    return sum / (to - from);
  });
}

function niceCeiling(value: number): number {
  const step = 200;
  return Math.max(step, Math.ceil(value / step) * step);
}

function dash(pattern: string): string {
  return pattern ? ` stroke-dasharray="${pattern}"` : '';
}

function fmt(value: number): string {
  return value.toFixed(1);
}

function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
