import type { ResolvedDashboardGroup } from './resilience-admin.options.js';

/** Escapes text for HTML content and double- or single-quoted attribute values. @internal */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The app's own buttons, one box per group; every name and value escaped (they come from configuration). */
function renderActionGroups(groups: readonly ResolvedDashboardGroup[]): string {
  if (groups.length === 0) return '';
  const boxes = groups.map((group) => {
    const buttons = group.actions.map((action) => {
      const attrs = [
        'type="button"',
        `data-method="${action.method}"`,
        `data-url="${escapeHtml(action.url)}"`,
        action.body === undefined ? '' : `data-body="${escapeHtml(action.body)}"`,
        action.activeWhen === undefined
          ? ''
          : `data-active-when="${escapeHtml(action.activeWhen)}" aria-pressed="false"`,
      ].filter(Boolean);
      return `<button ${attrs.join(' ')}>${escapeHtml(action.label)}</button>`;
    });
    const stateUrl = group.stateUrl === undefined ? '' : ` data-state-url="${escapeHtml(group.stateUrl)}"`;
    return [
      `<article class="card control-group" data-group="${escapeHtml(group.name)}"${stateUrl}>`,
      `<h3>${escapeHtml(group.name)}</h3>`,
      group.stateUrl === undefined ? '' : '<p class="group-state muted" data-role="state">…</p>',
      `<div class="actions">${buttons.join('')}</div>`,
      '<output class="answer muted" data-role="answer" aria-live="polite"></output>',
      '</article>',
    ]
      .filter(Boolean)
      .join('\n');
  });
  return `  <section aria-labelledby="controls-title">
    <h2 id="controls-title">Controls</h2>
    <div id="controls" class="grid">
${boxes.join('\n')}
    </div>
  </section>
`;
}

/**
 * The dashboard, self-contained: one page, one style sheet, one script, no CDN and no build step. It
 * reads the admin API next to it (relative URLs, so any mount path and global prefix work) and listens
 * to its event stream. Served from the same origin, so a `script-src 'self'` policy allows it. The app's
 * own buttons (`dashboard: { actions }`) are rendered into the page, escaped.
 *
 * @internal
 */
export function renderDashboardHtml(groups: readonly ResolvedDashboardGroup[], signInUrl?: string): string {
  const connection = '<span id="connection" class="conn" data-connected="false">';
  return DASHBOARD_HTML.replace('<main>\n', `<main>\n${renderActionGroups(groups)}`).replace(
    connection,
    signInUrl === undefined ? connection : connection.replace('>', ` data-sign-in="${escapeHtml(signInUrl)}">`),
  );
}

/** The page without buttons of the app's own. @internal */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Resilience dashboard</title>
<link rel="stylesheet" href="dashboard.css">
<link rel="icon" href="data:,">
</head>
<body>
<header>
  <h1>Resilience</h1>
  <span id="instance" class="muted"></span>
  <span id="connection" class="conn" data-connected="false">connecting…</span>
  <span id="updated" class="muted"></span>
</header>
<main>
  <section id="fleet" aria-labelledby="fleet-title" hidden>
    <h2 id="fleet-title">Fleet</h2>
    <div id="fleet-summary" class="summary"></div>
    <p id="fleet-notice" class="empty" hidden></p>
    <div class="table-wrap"><table id="fleet-instances">
      <thead><tr><th>instance</th><th>last seen</th><th>calls/s</th><th>circuits</th></tr></thead>
      <tbody></tbody>
    </table></div>
    <h3>Circuits per instance</h3>
    <p class="empty" data-empty="fleet-circuits" hidden>No instance has a circuit yet.</p>
    <div class="table-wrap"><table id="fleet-circuits">
      <thead><tr></tr></thead>
      <tbody></tbody>
    </table></div>
    <h3>Whole fleet <span class="muted">(last minute, instances heard from lately)</span></h3>
    <p class="empty" data-empty="fleet-pipelines" hidden>No calls in the fleet in the last minute.</p>
    <div class="table-wrap"><table id="fleet-pipelines">
      <thead><tr><th>pipeline</th><th>instances</th><th>calls/s</th><th>failures</th><th>rejections</th></tr></thead>
      <tbody></tbody>
    </table></div>
  </section>
  <section aria-labelledby="circuits-title">
    <h2 id="circuits-title">Circuits <span class="muted">(charts: last 5 min)</span></h2>
    <div id="circuits" class="grid"><p class="empty" data-empty="circuits">No circuit yet: circuits appear once their pipeline has run.</p></div>
  </section>
  <section aria-labelledby="stats-title">
    <h2 id="stats-title">Pipelines <span class="muted">(last minute; operation keys under each)</span></h2>
    <p class="empty" data-empty="stats">No calls in the last minute.</p>
    <div class="table-wrap" hidden><table id="stats">
      <thead><tr><th>pipeline / operation</th><th>calls/s</th><th>failures</th><th>rejections</th><th>p50</th><th>p90</th><th>p99</th></tr></thead>
      <tbody></tbody>
    </table></div>
  </section>
  <section aria-labelledby="limiters-title">
    <h2 id="limiters-title">Limiters <span class="muted">(charts: since the page opened)</span></h2>
    <p class="empty" data-empty="limiters">No limiter yet: limiters appear once their pipeline has run.</p>
    <div class="table-wrap" hidden><table id="limiters">
      <thead><tr><th>pipeline</th><th>kind</th><th>limit</th><th>in use</th><th>queued</th><th>throttle: requests / accepts, reject probability</th></tr></thead>
      <tbody></tbody>
    </table></div>
  </section>
  <section aria-labelledby="events-title">
    <h2 id="events-title">Last events</h2>
    <p class="empty" data-empty="events">No event yet.</p>
    <ol id="events" class="events"></ol>
  </section>
</main>
<script src="dashboard.js" defer></script>
</body>
</html>
`;

/** @internal */
export const DASHBOARD_CSS = `:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --fg: #1b1f24; --muted: #65707c;
  --closed: #1a7f37; --open: #cf222e; --half: #bf8700; --isolated: #8250df; --line: #d8dee4; --calls: #0969da; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --card: #161b22; --fg: #e6edf3; --muted: #8d96a0; --line: #30363d; --calls: #4493f8; } }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
header { display: flex; flex-wrap: wrap; gap: .75rem; align-items: baseline; padding: .75rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); position: sticky; top: 0; z-index: 1; }
h1 { font-size: 1.15rem; margin: 0; }
h2 { font-size: 1rem; margin: 1.25rem 0 .5rem; }
h3 { font-size: .9rem; margin: .75rem 0 .35rem; }
main { padding: 0 1rem 2rem; max-width: 1400px; margin: 0 auto; }
.muted { color: var(--muted); font-weight: normal; }
.empty { color: var(--muted); font-style: italic; margin: .25rem 0; }
.conn::before { content: ""; display: inline-block; width: .6rem; height: .6rem; border-radius: 50%; margin-right: .35rem; background: var(--half); }
.conn[data-connected="true"]::before { background: var(--closed); }
.conn[data-signed-out="true"]::before { background: var(--open); }
body[data-stale="true"] main { opacity: .45; }
.grid { display: grid; gap: .75rem; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); }
.card { background: var(--card); border: 1px solid var(--line); border-left: 6px solid var(--closed); border-radius: 8px; padding: .75rem; min-width: 0; }
.card[data-state="open"] { border-left-color: var(--open); }
.card[data-state="half-open"] { border-left-color: var(--half); }
.card[data-state="isolated"] { border-left-color: var(--isolated); }
.card h3 { margin: 0 0 .25rem; font-size: .95rem; word-break: break-all; }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; color: #fff; font-size: .8rem; font-weight: 600; background: var(--closed); white-space: nowrap; }
.badge[data-state="open"] { background: var(--open); }
.badge[data-state="half-open"] { background: var(--half); }
.badge[data-state="isolated"] { background: var(--isolated); }
dl { display: grid; grid-template-columns: auto 1fr; gap: .15rem .75rem; margin: .5rem 0; }
dt { color: var(--muted); }
dd { margin: 0; font-variant-numeric: tabular-nums; }
dd[data-role="retry"] { font-weight: 600; color: var(--open); }
.latency { display: inline-flex; flex-wrap: wrap; gap: .6rem; }
.pct small { color: var(--muted); font-weight: 600; }
.bar { height: .4rem; background: var(--line); border-radius: .2rem; overflow: hidden; }
.bar > span { display: block; height: 100%; background: var(--open); }
.charts { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: .5rem; margin-top: .6rem; }
.chart { margin: 0; min-width: 0; }
.chart figcaption { display: flex; flex-direction: column; font-size: .75rem; color: var(--muted); }
.chart figcaption strong { color: var(--fg); font-variant-numeric: tabular-nums; white-space: nowrap; }
.spark { display: block; width: 100%; height: 2rem; overflow: visible; }
td .spark { display: inline-block; width: 7rem; height: 1.25rem; vertical-align: middle; margin-left: .5rem; }
.spark .line { fill: none; stroke: var(--calls); stroke-width: 1.5; vector-effect: non-scaling-stroke; }
.spark .area { fill: var(--calls); opacity: .15; }
.spark .reference { stroke: var(--muted); stroke-dasharray: 3 3; vector-effect: non-scaling-stroke; }
.chart[data-kind="failures"] .line, .chart[data-kind="failures"] .area { stroke: var(--open); }
.chart[data-kind="failures"] .area { fill: var(--open); }
.chart[data-kind="rejections"] .line { stroke: var(--half); }
.chart[data-kind="rejections"] .area { fill: var(--half); }
.summary { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; }
.summary .chart { width: 16rem; }
.history { margin-top: .6rem; }
.timeline { display: block; width: 100%; height: .6rem; background: var(--line); border-radius: .2rem; }
.band[data-state="closed"] { fill: var(--closed); }
.band[data-state="open"] { fill: var(--open); }
.band[data-state="half-open"] { fill: var(--half); }
.band[data-state="isolated"] { fill: var(--isolated); }
.changes { list-style: none; margin: .25rem 0 0; padding: 0; font-size: .8rem; color: var(--muted); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: .5rem; }
button { font: inherit; padding: .35rem .8rem; border-radius: 6px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); cursor: pointer; min-height: 2.25rem; }
button:disabled { opacity: .5; cursor: default; }
button[aria-pressed="true"] { background: var(--fg); color: var(--bg); border-color: var(--fg); }
.control-group { border-left-color: var(--line); }
.group-state { margin: .25rem 0; word-break: break-word; }
.answer { display: block; margin-top: .5rem; font-size: .85rem; word-break: break-word; }
.answer[data-ok="false"] { color: var(--open); }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); white-space: nowrap; font-variant-numeric: tabular-nums; }
thead th { color: var(--muted); font-weight: 600; }
tbody th { font-weight: 600; }
tr.operation th { font-weight: normal; padding-left: 1.6rem; color: var(--muted); }
tr.operation th::before { content: "↳ "; }
tr[data-stale="true"] { opacity: .55; }
.events { list-style: none; margin: 0; padding: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; max-height: 24rem; overflow-y: auto; }
.events:empty { display: none; }
.events li { padding: .35rem .6rem; border-bottom: 1px solid var(--line); display: flex; gap: .5rem; flex-wrap: wrap; }
.events time { color: var(--muted); font-variant-numeric: tabular-nums; }
.sev-error, .sev-critical { color: var(--open); font-weight: 600; }
.sev-warning { color: var(--half); font-weight: 600; }
@media (max-width: 600px) { main { padding: 0 .5rem 2rem; } .grid { grid-template-columns: 1fr; } }
`;

/** @internal */
export const DASHBOARD_JS = `'use strict';
(function () {
  var base = location.pathname.replace(/\\/dashboard\\/?$/, '') + '/';
  var SVG = 'http://www.w3.org/2000/svg';
  /** Samples the page keeps of figures the API reads as of now (limiters, the fleet's rate): 5 min at 2 s. */
  var KEEP = 150;
  var state = { control: false, fleet: false, instanceName: null, circuits: [], stats: [], limiters: [], history: [], fleetView: null };
  var samples = { limiters: {}, fleet: [] };
  var refreshTimer = null;
  var source = null;
  var poll = null;
  var signedOut = false;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }
  function api(path, init) {
    return fetch(base + path, Object.assign({ credentials: 'same-origin', headers: { accept: 'application/json' } }, init))
      .then(function (res) {
        if (refused(res.status)) { signOut(); throw new Error('signed out'); }
        if (!res.ok) throw new Error(res.status + ' ' + path);
        return res.json();
      });
  }
  /** The admin API (or a route behind the same guard) refused the page: the session ended. */
  function refused(status) { return status === 401 || status === 403; }
  function notLive(text) {
    var conn = document.getElementById('connection');
    conn.dataset.connected = 'false';
    conn.textContent = text;
    // What is on the page is no longer live.
    document.body.dataset.stale = 'true';
    if (!document.getElementById('updated').dataset.since) {
      document.getElementById('updated').dataset.since = 'true';
      document.getElementById('updated').textContent = 'not updated since ' + clock(Date.now());
    }
  }
  function live() {
    var conn = document.getElementById('connection');
    conn.dataset.connected = 'true';
    conn.textContent = 'live';
    delete document.body.dataset.stale;
    delete document.getElementById('updated').dataset.since;
  }
  function signOut() {
    if (signedOut) return;
    signedOut = true;
    if (source) source.close();
    if (poll) clearInterval(poll);
    var conn = document.getElementById('connection');
    notLive('signed out');
    conn.dataset.signedOut = 'true';
    if (conn.dataset.signIn) {
      conn.appendChild(document.createTextNode(' · '));
      conn.appendChild(el('a', { href: conn.dataset.signIn, 'data-role': 'sign-in', text: 'sign in again' }));
    }
  }

  // Human units: "0.25 ms", "2.5 ms", "250 ms", "9.9 s", "42 s", "3 min 5 s", "1 h 2 min".
  function dur(ms) {
    if (ms === undefined || ms === null || !isFinite(ms)) return '–';
    if (ms < 1) return (Math.round(ms * 100) / 100) + ' ms';
    if (ms < 10) return (Math.round(ms * 10) / 10) + ' ms';
    if (ms < 1000) return Math.round(ms) + ' ms';
    var s = ms / 1000;
    if (s < 10) return (Math.floor(s * 10) / 10).toFixed(1) + ' s';
    if (s < 60) return Math.floor(s) + ' s';
    var m = Math.floor(s / 60), rest = Math.floor(s % 60);
    if (m < 60) return m + ' min' + (rest ? ' ' + rest + ' s' : '');
    var h = Math.floor(m / 60);
    return h + ' h' + (m % 60 ? ' ' + (m % 60) + ' min' : '');
  }
  function num(v) { return v >= 100 ? String(Math.round(v)) : v >= 10 ? String(Math.round(v * 10) / 10) : String(Math.round(v * 100) / 100); }
  function perSecond(v) { return num(v) + '/s'; }
  function pct(v) { return (Math.round(v * 1000) / 10) + ' %'; }
  function clock(t) { return new Date(t).toLocaleTimeString(); }
  function label(name, key) { return key ? name + ' [' + key + ']' : name; }
  function same(a, b) { return (a || '') === (b || ''); }

  /**
   * A sparkline: the values as a line over a filled area, scaled to their maximum (or \`opts.max\`), with an
   * optional dashed reference line (a limit). An empty series says so.
   */
  function spark(values, opts) {
    opts = opts || {};
    var w = 160, h = 32;
    var box = svg('svg', { class: 'spark', viewBox: '0 0 ' + w + ' ' + h, preserveAspectRatio: 'none', role: 'img', 'data-points': String(values.length) });
    var title = svg('title', {});
    title.textContent = opts.label || '';
    box.appendChild(title);
    if (values.length === 0) { box.dataset.empty = 'true'; return box; }
    var max = Math.max(opts.max || 0, opts.reference || 0, Math.max.apply(null, values)) || 1;
    var step = values.length > 1 ? w / (values.length - 1) : w;
    var points = values.map(function (v, i) { return (i * step).toFixed(1) + ',' + (h - 1 - (v / max) * (h - 3)).toFixed(1); });
    if (values.length === 1) points.push(w + ',' + points[0].split(',')[1]);
    box.appendChild(svg('polygon', { class: 'area', points: '0,' + h + ' ' + points.join(' ') + ' ' + w + ',' + h }));
    box.appendChild(svg('polyline', { class: 'line', points: points.join(' ') }));
    if (opts.reference) {
      var y = (h - 1 - (opts.reference / max) * (h - 3)).toFixed(1);
      box.appendChild(svg('line', { class: 'reference', x1: '0', x2: String(w), y1: y, y2: y }));
    }
    return box;
  }
  /** A labelled chart: its name, its current value, the sparkline. */
  function chart(name, value, values, opts) {
    opts = opts || {};
    var kind = opts.kind || 'calls';
    return el('figure', { class: 'chart', 'data-chart': name, 'data-kind': kind }, [
      el('figcaption', null, [el('span', { text: name }), el('strong', { text: value })]),
      spark(values, { label: name + ' over the last ' + (opts.span || '5 min'), max: opts.max, reference: opts.reference }),
    ]);
  }

  function statsOf(name, key) {
    return state.stats.find(function (s) { return s.pipelineName === name && same(s.instanceName, key); });
  }
  function seriesOf(s) {
    if (!s || !s.series) return { calls: [], failureRate: [], rejections: [] };
    var step = s.series.step;
    return {
      calls: s.series.calls.map(function (c) { return c / step; }),
      failureRate: s.series.calls.map(function (c, i) { return c ? s.series.failures[i] / c : 0; }),
      rejections: s.series.rejections.map(function (r) { return r / step; }),
    };
  }
  function latencyOf(l) {
    if (!l) return el('span', { class: 'muted', text: 'no calls yet' });
    return el('span', { class: 'latency' }, ['p50', 'p90', 'p99'].map(function (p) {
      return el('span', { class: 'pct', 'data-percentile': p }, [el('small', { text: p }), ' ' + dur(l[p])]);
    }));
  }

  function drive(c, action, button) {
    button.disabled = true;
    var q = c.instanceKey ? '?key=' + encodeURIComponent(c.instanceKey) : '';
    api('circuits/' + encodeURIComponent(c.pipelineName) + '/' + action + q, { method: 'POST' })
      .then(refresh, function (e) { console.warn('resilience dashboard: ' + e.message); })
      .finally(function () { button.disabled = false; });
  }

  var VERB = { open: 'opened', closed: 'closed', 'half-open': 'half-opened', isolated: 'isolated' };
  /** The last five minutes of a circuit's states as coloured bands, and its last changes in words. */
  function timeline(c) {
    var h = state.history.find(function (x) { return x.pipelineName === c.pipelineName && same(x.instanceKey, c.instanceKey) && same(x.strategyName, c.strategyName); });
    var changes = h ? h.changes : [];
    var now = Date.now(), from = now - 300000, w = 300;
    var box = svg('svg', { class: 'timeline', viewBox: '0 0 ' + w + ' 10', preserveAspectRatio: 'none', role: 'img' });
    var title = svg('title', {});
    title.textContent = 'states over the last 5 min';
    box.appendChild(title);
    changes.forEach(function (change, i) {
      var end = i + 1 < changes.length ? changes[i + 1].at : now;
      var start = Math.max(change.at, from);
      if (end <= from) return;
      box.appendChild(svg('rect', { class: 'band', 'data-state': change.state, x: String(((start - from) / 300000) * w), y: '0', height: '10', width: String(Math.max(1, ((end - start) / 300000) * w)) }));
    });
    var list = el('ol', { class: 'changes' });
    changes.slice(-3).reverse().forEach(function (change, i, recent) {
      var next = i === 0 ? null : recent[i - 1];
      var how = next ? 'for ' + dur(next.at - change.at) : 'for ' + dur(now - change.at) + ' now';
      list.appendChild(el('li', { 'data-state': change.state, text: VERB[change.state] + ' ' + clock(change.at) + ' · ' + how }));
    });
    if (!changes.length) list.appendChild(el('li', { class: 'muted', text: 'no state change seen yet' }));
    return el('div', { class: 'history', 'data-role': 'history' }, [box, list]);
  }

  function renderCircuits() {
    var root = document.getElementById('circuits');
    root.textContent = '';
    if (state.circuits.length === 0) { root.appendChild(el('p', { class: 'empty', 'data-empty': 'circuits', text: 'No circuit yet: circuits appear once their pipeline has run.' })); return; }
    state.circuits.forEach(function (c) {
      var s = statsOf(c.pipelineName, c.instanceKey);
      var series = seriesOf(s);
      var threshold = c.kind === 'consecutive' ? c.failures + ' / ' + c.threshold + ' in a row' : pct(c.failureRatio) + ' of ' + c.throughput + ' calls (opens at ' + pct(c.threshold) + ')';
      var ratio = c.kind === 'consecutive' ? Math.min(1, c.failures / Math.max(1, c.threshold)) : c.failureRatio;
      var bar = el('div', { class: 'bar', role: 'img', 'aria-label': 'failure ratio ' + pct(c.failureRatio) }, [el('span')]);
      bar.firstChild.style.width = Math.round(ratio * 100) + '%';
      var rows = [['failures', threshold], ['latency', latencyOf(s && s.latency)]];
      if (c.state === 'open' && c.retryAfter !== undefined && c.retryAfter !== null) rows.unshift(['retry', c.retryAfter > 0 ? 'in ' + dur(c.retryAfter) : 'now (the next call probes)']);
      var dl = el('dl');
      rows.forEach(function (r) {
        var dt = el('dt', { text: r[0] });
        var dd = el('dd', null, [typeof r[1] === 'string' ? document.createTextNode(r[1]) : r[1]]);
        if (r[0] === 'retry') dd.dataset.role = 'retry';
        dl.appendChild(dt); dl.appendChild(dd);
      });
      var actions = null;
      if (state.control) {
        var isolate = el('button', { type: 'button', 'data-action': 'isolate', text: 'Isolate' });
        var close = el('button', { type: 'button', 'data-action': 'close', text: 'Close' });
        isolate.addEventListener('click', function () { drive(c, 'isolate', isolate); });
        close.addEventListener('click', function () { drive(c, 'close', close); });
        isolate.disabled = c.state === 'isolated';
        close.disabled = c.state === 'closed';
        actions = el('div', { class: 'actions' }, [isolate, close]);
      }
      var charts = el('div', { class: 'charts' }, [
        chart('calls/s', s ? perSecond(s.callRate) : '–', series.calls),
        chart('failure rate', s && s.calls ? pct(s.failures / s.calls) : '–', series.failureRate, { max: 1, kind: 'failures' }),
        chart('rejections/s', s ? perSecond(s.rejections / s.window) : '–', series.rejections, { kind: 'rejections' }),
      ]);
      root.appendChild(el('article', { class: 'card', 'data-circuit': c.pipelineName, 'data-instance': c.instanceKey || '', 'data-state': c.state }, [
        el('h3', { text: label(c.pipelineName, c.instanceKey) + (c.strategyName ? ' / ' + c.strategyName : '') }),
        el('span', { class: 'badge', 'data-state': c.state, text: c.state }),
        el('span', { class: 'muted', text: ' ' + c.kind + (c.stale ? ' · local view (store unreachable)' : '') }),
        dl, bar, charts, timeline(c), actions,
      ]));
    });
  }

  /** Pipelines by name, each instance's row and its operation keys under it. */
  function renderStats() {
    var body = document.querySelector('#stats tbody');
    body.textContent = '';
    var active = state.stats.filter(function (s) { return s.calls + s.rejections > 0; });
    toggleEmpty('stats', active.length === 0);
    active.sort(function (a, b) { return a.pipelineName < b.pipelineName ? -1 : a.pipelineName > b.pipelineName ? 1 : (a.instanceName || '') < (b.instanceName || '') ? -1 : 1; });
    active.forEach(function (s) {
      var l = s.latency || {};
      var series = seriesOf(s);
      body.appendChild(el('tr', { class: 'pipeline', 'data-pipeline': s.pipelineName, 'data-instance': s.instanceName || '' }, [
        el('th', { scope: 'row', text: label(s.pipelineName, s.instanceName) }),
        el('td', null, [el('span', { class: 'value', text: perSecond(s.callRate) }), spark(series.calls, { label: 'calls/s over the last 5 min' })]),
        el('td', { text: String(s.failures) + (s.calls ? ' (' + pct(s.failures / s.calls) + ')' : '') }),
        el('td', { text: String(s.rejections) }),
        el('td', { text: dur(l.p50) }), el('td', { text: dur(l.p90) }), el('td', { text: dur(l.p99) }),
      ]));
      (s.operations || []).forEach(function (o) {
        var ol = o.latency || {};
        body.appendChild(el('tr', { class: 'operation', 'data-pipeline': s.pipelineName, 'data-operation': o.operationKey }, [
          el('th', { scope: 'row', class: 'op', text: o.operationKey }),
          el('td', { text: perSecond(o.callRate) }),
          el('td', { text: String(o.failures) }), el('td', { text: String(o.rejections) }),
          el('td', { text: dur(ol.p50) }), el('td', { text: dur(ol.p90) }), el('td', { text: dur(ol.p99) }),
        ]));
      });
    });
  }

  function toggleEmpty(id, empty) {
    var table = document.getElementById(id);
    table.closest('.table-wrap').hidden = empty;
    document.querySelector('[data-empty="' + id + '"]').hidden = !empty;
  }

  function sample(list, value) { list.push(value); while (list.length > KEEP) list.shift(); return list; }

  function renderLimiters() {
    var body = document.querySelector('#limiters tbody');
    body.textContent = '';
    toggleEmpty('limiters', state.limiters.length === 0);
    state.limiters.forEach(function (l) {
      var id = l.pipelineName + '\\u0000' + (l.instanceKey || '') + '\\u0000' + l.kind;
      var seen = samples.limiters[id] || (samples.limiters[id] = { inUse: [], queued: [] });
      var inUse = l.permitsInUse === undefined || l.permitsInUse === null ? null : l.permitsInUse;
      body.appendChild(el('tr', { 'data-limiter': l.pipelineName }, [
        el('th', { scope: 'row', text: label(l.pipelineName, l.instanceKey) + (l.distributed && !l.throttle ? ' (this instance)' : '') }),
        el('td', { text: l.kind }),
        el('td', { text: l.permitLimit === undefined || l.permitLimit === null ? '–' : String(l.permitLimit) }),
        el('td', null, [el('span', { class: 'value', text: inUse === null ? '–' : String(inUse) }), spark(inUse === null ? [] : seen.inUse, { label: 'in use (dashed: the limit) since the page opened', reference: l.permitLimit })]),
        el('td', null, [el('span', { class: 'value', text: String(l.queueLength) + (l.queueLimit ? ' / ' + l.queueLimit : '') }), spark(seen.queued, { label: 'queued since the page opened', reference: l.queueLimit })]),
        el('td', { 'data-throttle': l.throttle ? 'yes' : 'no', 'data-shared': l.throttle && l.throttle.shared !== undefined ? String(l.throttle.shared) : '', text: throttleText(l.throttle) }),
      ]));
    });
  }
  /**
   * Adaptive throttling's figures: requests / accepts in its window, and the reject probability; with
   * \`fleet\`, whose they are (the fleet's, or this instance's own until a sync answers).
   */
  function throttleText(t) {
    if (!t) return '–';
    var whose = t.shared === true ? " · the fleet's" : t.shared === false ? ' · this instance only (not synced)' : '';
    return t.requests + ' / ' + t.accepts + ', ' + Math.round(t.rejectProbability * 100) + ' %' + whose;
  }
  function sampleLimiters() {
    state.limiters.forEach(function (l) {
      var id = l.pipelineName + '\\u0000' + (l.instanceKey || '') + '\\u0000' + l.kind;
      var seen = samples.limiters[id] || (samples.limiters[id] = { inUse: [], queued: [] });
      if (l.permitsInUse !== undefined && l.permitsInUse !== null) sample(seen.inUse, l.permitsInUse);
      sample(seen.queued, l.queueLength);
    });
  }

  function renderFleet() {
    var root = document.getElementById('fleet');
    if (!state.fleet) { root.hidden = true; return; }
    root.hidden = false;
    var view = state.fleetView;
    if (!view) return;
    var instances = view.instances;
    var rate = view.pipelines.reduce(function (sum, p) { return sum + p.callRate; }, 0);
    sample(samples.fleet, rate);
    var summary = document.getElementById('fleet-summary');
    summary.textContent = '';
    summary.appendChild(chart('fleet calls/s', perSecond(rate), samples.fleet, { span: 'time the page has been open' }));
    summary.appendChild(el('p', { class: 'muted', text: instances.length + (instances.length === 1 ? ' instance' : ' instances') + ' · each publishes every ' + dur(view.interval) }));
    var notice = document.getElementById('fleet-notice');
    notice.textContent = !view.available ? 'Redis cannot be read: this instance only, until it is back.' : instances.length === 1 ? 'No other instance has published yet.' : '';
    notice.hidden = notice.textContent === '';

    var body = document.querySelector('#fleet-instances tbody');
    body.textContent = '';
    instances.forEach(function (i) {
      var calls = i.pipelines.reduce(function (sum, p) { return sum + p.callRate; }, 0);
      var notClosed = i.circuits.filter(function (c) { return c.state !== 'closed'; }).length;
      body.appendChild(el('tr', { 'data-instance-name': i.name, 'data-stale': String(i.stale) }, [
        el('th', { scope: 'row', text: i.name + (i.self ? ' (this one)' : '') }),
        el('td', { text: (i.self ? 'now' : dur(i.lastSeen) + ' ago') + (i.stale ? ' · silent' : '') }),
        el('td', { text: perSecond(calls) }),
        el('td', { text: notClosed ? notClosed + ' not closed' : 'all closed' }),
      ]));
    });

    // One row per circuit, one column per instance.
    var head = document.querySelector('#fleet-circuits thead tr');
    head.textContent = '';
    head.appendChild(el('th', { text: 'circuit' }));
    instances.forEach(function (i) { head.appendChild(el('th', { text: i.name })); });
    var circuits = [];
    instances.forEach(function (i) { i.circuits.forEach(function (c) {
      var id = c.pipelineName + '\\u0000' + (c.instanceKey || '') + '\\u0000' + (c.strategyName || '');
      if (circuits.indexOf(id) < 0) circuits.push(id);
    }); });
    var rows = document.querySelector('#fleet-circuits tbody');
    rows.textContent = '';
    toggleEmpty('fleet-circuits', circuits.length === 0);
    circuits.sort().forEach(function (id) {
      var parts = id.split('\\u0000');
      var row = el('tr', { 'data-fleet-circuit': parts[0], 'data-instance': parts[1] }, [el('th', { scope: 'row', text: label(parts[0], parts[1]) + (parts[2] ? ' / ' + parts[2] : '') })]);
      instances.forEach(function (i) {
        var c = i.circuits.find(function (x) { return x.pipelineName === parts[0] && same(x.instanceKey, parts[1]) && same(x.strategyName, parts[2]); });
        var cell = el('td', { 'data-fleet-instance': i.name, 'data-state': c ? c.state : 'unknown' });
        cell.appendChild(c ? el('span', { class: 'badge', 'data-state': c.state, text: c.state + (c.state === 'open' && c.retryAfter ? ' · ' + dur(c.retryAfter) : '') }) : el('span', { class: 'muted', text: '–' }));
        row.appendChild(cell);
      });
      rows.appendChild(row);
    });

    var totals = document.querySelector('#fleet-pipelines tbody');
    totals.textContent = '';
    toggleEmpty('fleet-pipelines', view.pipelines.length === 0);
    view.pipelines.forEach(function (p) {
      totals.appendChild(el('tr', { 'data-pipeline': p.pipelineName }, [
        el('th', { scope: 'row', text: label(p.pipelineName, p.instanceName) }),
        el('td', { text: String(p.instances) }),
        el('td', { text: perSecond(p.callRate) }),
        el('td', { text: String(p.failures) + (p.calls ? ' (' + pct(p.failures / p.calls) + ')' : '') }),
        el('td', { text: String(p.rejections) }),
      ]));
    });
  }

  function render() {
    renderFleet();
    renderCircuits();
    renderStats();
    renderLimiters();
    document.getElementById('updated').textContent = 'updated ' + clock(Date.now());
  }

  function summary(value) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return JSON.stringify(value);
    var parts = Object.keys(value).filter(function (k) { var v = value[k]; return v === null || typeof v !== 'object'; })
      .map(function (k) { return k + ': ' + value[k]; });
    return parts.length ? parts.join(' · ') : JSON.stringify(value);
  }
  function clip(text) { return text.length > 300 ? text.slice(0, 300) + '…' : text; }
  function readBody(res) {
    return res.text().then(function (text) {
      try { return { json: true, value: JSON.parse(text) }; } catch (e) { return { json: false, value: text }; }
    });
  }

  function showState(group, value) {
    var target = group.querySelector('[data-role="state"]');
    if (target) target.textContent = clip(summary(value));
    group.querySelectorAll('button[data-active-when]').forEach(function (b) {
      var want = JSON.parse(b.dataset.activeWhen);
      var on = value !== null && typeof value === 'object' && Object.keys(want).every(function (k) { return value[k] === want[k]; });
      b.setAttribute('aria-pressed', on ? 'true' : 'false');
    });
  }
  function loadState(group) {
    var url = group.dataset.stateUrl;
    if (!url) return Promise.resolve();
    return fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (res) { if (refused(res.status)) { signOut(); return; } return readBody(res).then(function (b) { if (res.ok && b.json) showState(group, b.value); else group.querySelector('[data-role="state"]').textContent = res.status + ' ' + clip(summary(b.value)); }); },
        function (e) { group.querySelector('[data-role="state"]').textContent = 'unreachable: ' + e.message; });
  }
  function loadStates() { return Promise.all(Array.prototype.map.call(document.querySelectorAll('.control-group'), loadState)); }

  function runAction(button) {
    var group = button.closest('.control-group');
    var answer = group.querySelector('[data-role="answer"]');
    var init = { method: button.dataset.method, credentials: 'same-origin', headers: { accept: 'application/json' } };
    if (button.dataset.body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = button.dataset.body; }
    button.disabled = true;
    answer.dataset.ok = '';
    answer.textContent = button.dataset.method + ' ' + button.dataset.url + ' …';
    fetch(button.dataset.url, init)
      .then(function (res) {
        if (refused(res.status)) { signOut(); answer.dataset.ok = 'false'; answer.textContent = button.textContent + ' → signed out'; return; }
        return readBody(res).then(function (b) {
          var text = b.json && b.value && typeof b.value === 'object' && typeof b.value.message === 'string' ? b.value.message : summary(b.value);
          answer.dataset.ok = res.ok ? 'true' : 'false';
          answer.textContent = button.textContent + ' → ' + res.status + (text && text !== '""' ? ': ' + clip(text) : '');
        });
      }, function (e) { answer.dataset.ok = 'false'; answer.textContent = button.textContent + ' → failed: ' + e.message; })
      .then(function () { button.disabled = false; return refresh(); });
  }
  function bindActions() {
    document.querySelectorAll('.control-group button[data-url]').forEach(function (b) {
      b.addEventListener('click', function () { runAction(b); });
    });
  }

  function refresh() {
    if (signedOut) return Promise.resolve();
    var reads = [api('circuits'), api('stats'), api('limiters'), api('history'), state.fleet ? api('fleet') : Promise.resolve(null)];
    // The groups' states are read here too, so a click (which refreshes) reads its group's state once.
    return Promise.all([loadStates(), Promise.all(reads).then(function (r) {
      state.circuits = r[0]; state.stats = r[1]; state.limiters = r[2]; state.history = r[3]; state.fleetView = r[4];
      sampleLimiters();
      render();
      if (source && source.readyState === EventSource.OPEN) live();
    }, function (e) {
      if (!signedOut) notLive('unreachable');
      console.warn('resilience dashboard: ' + e.message);
    })]);
  }
  function refreshSoon() {
    if (refreshTimer) return;
    refreshTimer = setTimeout(function () { refreshTimer = null; refresh(); }, 50);
  }

  function addEvent(e) {
    var list = document.getElementById('events');
    var empty = document.querySelector('[data-empty="events"]');
    if (empty) empty.hidden = true;
    var where = [e.pipelineName, e.instanceName, e.strategyName || e.strategyType].filter(Boolean).join(' / ');
    var details = [e.details, e.outcome].filter(Boolean).join(', ');
    list.insertBefore(el('li', { 'data-event': e.eventName }, [
      el('time', { text: clock(e.time) }),
      el('strong', { class: 'sev-' + e.severity, text: e.eventName }),
      el('span', { text: where }),
      el('span', { class: 'muted', text: details }),
    ]), list.firstChild);
    while (list.children.length > 50) list.removeChild(list.lastChild);
    if (e.changesState) refreshSoon();
  }

  function connect() {
    if (signedOut) return;
    source = new EventSource(base + 'events', { withCredentials: true });
    source.addEventListener('ready', function () { live(); refresh(); });
    source.addEventListener('resilience', function (m) { addEvent(JSON.parse(m.data)); });
    source.onerror = function () {
      if (signedOut) return;
      if (source.readyState !== EventSource.CLOSED) { notLive('reconnecting…'); return; }
      // Refused (the browser does not retry then): ask the API why; a refusal means the session ended.
      notLive('disconnected');
      source.close();
      api('').then(function () { setTimeout(connect, 2000); }, function () { if (!signedOut) setTimeout(connect, 2000); });
    };
  }

  bindActions();
  api('').then(function (info) {
    state.control = !!info.control;
    state.fleet = !!info.fleet;
    state.instanceName = info.instanceName || null;
    if (state.instanceName) document.getElementById('instance').textContent = state.instanceName;
  })
    .then(function () { return api('events/recent'); })
    .then(function (events) { events.forEach(addEvent); }, function (e) { console.warn('resilience dashboard: ' + e.message); })
    .then(function () { refresh(); connect(); if (!signedOut) poll = setInterval(refresh, 2000); });
})();
`;
