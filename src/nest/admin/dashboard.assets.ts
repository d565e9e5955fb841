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
  <span id="connection" class="conn" data-connected="false">connecting…</span>
  <span id="updated" class="muted"></span>
</header>
<main>
  <section aria-labelledby="circuits-title">
    <h2 id="circuits-title">Circuits</h2>
    <div id="circuits" class="grid"><p class="muted">No circuit yet.</p></div>
  </section>
  <section aria-labelledby="stats-title">
    <h2 id="stats-title">Pipelines <span class="muted">(last minute)</span></h2>
    <div class="table-wrap"><table id="stats">
      <thead><tr><th>pipeline</th><th>calls/s</th><th>failures</th><th>rejections</th><th>p50</th><th>p90</th><th>p99</th></tr></thead>
      <tbody></tbody>
    </table></div>
  </section>
  <section aria-labelledby="limiters-title">
    <h2 id="limiters-title">Limiters</h2>
    <div class="table-wrap"><table id="limiters">
      <thead><tr><th>pipeline</th><th>kind</th><th>in use</th><th>limit</th><th>queued</th></tr></thead>
      <tbody></tbody>
    </table></div>
  </section>
  <section aria-labelledby="events-title">
    <h2 id="events-title">Last events</h2>
    <ol id="events" class="events"></ol>
  </section>
</main>
<script src="dashboard.js" defer></script>
</body>
</html>
`;

/** @internal */
export const DASHBOARD_CSS = `:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --fg: #1b1f24; --muted: #65707c;
  --closed: #1a7f37; --open: #cf222e; --half: #bf8700; --isolated: #8250df; --line: #d8dee4; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --card: #161b22; --fg: #e6edf3; --muted: #8d96a0; --line: #30363d; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
header { display: flex; flex-wrap: wrap; gap: .75rem; align-items: baseline; padding: .75rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); position: sticky; top: 0; }
h1 { font-size: 1.15rem; margin: 0; }
h2 { font-size: 1rem; margin: 1.25rem 0 .5rem; }
main { padding: 0 1rem 2rem; max-width: 1400px; margin: 0 auto; }
.muted { color: var(--muted); font-weight: normal; }
.conn::before { content: ""; display: inline-block; width: .6rem; height: .6rem; border-radius: 50%; margin-right: .35rem; background: var(--half); }
.conn[data-connected="true"]::before { background: var(--closed); }
.conn[data-signed-out="true"]::before { background: var(--open); }
body[data-stale="true"] main { opacity: .45; }
.grid { display: grid; gap: .75rem; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); }
.card { background: var(--card); border: 1px solid var(--line); border-left: 6px solid var(--closed); border-radius: 8px; padding: .75rem; }
.card[data-state="open"] { border-left-color: var(--open); }
.card[data-state="half-open"] { border-left-color: var(--half); }
.card[data-state="isolated"] { border-left-color: var(--isolated); }
.card h3 { margin: 0 0 .25rem; font-size: .95rem; word-break: break-all; }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; color: #fff; font-size: .8rem; font-weight: 600; background: var(--closed); }
.badge[data-state="open"] { background: var(--open); }
.badge[data-state="half-open"] { background: var(--half); }
.badge[data-state="isolated"] { background: var(--isolated); }
dl { display: grid; grid-template-columns: auto 1fr; gap: .15rem .75rem; margin: .5rem 0; }
dt { color: var(--muted); }
dd { margin: 0; font-variant-numeric: tabular-nums; }
.bar { height: .4rem; background: var(--line); border-radius: .2rem; overflow: hidden; }
.bar > span { display: block; height: 100%; background: var(--open); }
.actions { display: flex; gap: .5rem; margin-top: .5rem; }
button { font: inherit; padding: .35rem .8rem; border-radius: 6px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); cursor: pointer; min-height: 2.25rem; }
button:disabled { opacity: .5; cursor: default; }
.actions { flex-wrap: wrap; }
button[aria-pressed="true"] { background: var(--fg); color: var(--bg); border-color: var(--fg); }
.control-group { border-left-color: var(--line); }
.group-state { margin: .25rem 0; word-break: break-word; }
.answer { display: block; margin-top: .5rem; font-size: .85rem; word-break: break-word; }
.answer[data-ok="false"] { color: var(--open); }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); white-space: nowrap; font-variant-numeric: tabular-nums; }
th { color: var(--muted); font-weight: 600; }
.events { list-style: none; margin: 0; padding: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; max-height: 24rem; overflow-y: auto; }
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
  var state = { control: false, circuits: [], stats: [], limiters: [] };
  var refreshTimer = null;
  var source = null;
  var poll = null;
  var signedOut = false;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'onclick') node.addEventListener('click', attrs[k]);
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
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
  function signOut() {
    if (signedOut) return;
    signedOut = true;
    if (source) source.close();
    if (poll) clearInterval(poll);
    var conn = document.getElementById('connection');
    conn.dataset.connected = 'false';
    conn.dataset.signedOut = 'true';
    conn.textContent = 'signed out';
    if (conn.dataset.signIn) {
      conn.appendChild(document.createTextNode(' · '));
      conn.appendChild(el('a', { href: conn.dataset.signIn, 'data-role': 'sign-in', text: 'sign in again' }));
    }
    // What is on the page is no longer live.
    document.body.dataset.stale = 'true';
    document.getElementById('updated').textContent = 'not updated since ' + new Date().toLocaleTimeString();
  }
  function label(c) { return c.instanceKey ? c.pipelineName + ' [' + c.instanceKey + ']' : c.pipelineName; }
  function ms(v) { return v === undefined || v === null ? '–' : (v < 10 ? v.toFixed(1) : Math.round(v)) + ' ms'; }
  function pct(v) { return (Math.round(v * 1000) / 10) + '%'; }
  function statsOf(c) {
    return state.stats.find(function (s) { return s.pipelineName === c.pipelineName && (s.instanceName || undefined) === (c.instanceKey || undefined); });
  }

  function drive(c, action, button) {
    button.disabled = true;
    var q = c.instanceKey ? '?key=' + encodeURIComponent(c.instanceKey) : '';
    api('circuits/' + encodeURIComponent(c.pipelineName) + '/' + action + q, { method: 'POST' })
      .then(refresh, function (e) { console.warn('resilience dashboard: ' + e.message); })
      .finally(function () { button.disabled = false; });
  }

  function renderCircuits() {
    var root = document.getElementById('circuits');
    root.textContent = '';
    if (state.circuits.length === 0) { root.appendChild(el('p', { class: 'muted', text: 'No circuit yet.' })); return; }
    state.circuits.forEach(function (c) {
      var s = statsOf(c);
      var threshold = c.kind === 'consecutive' ? c.failures + ' / ' + c.threshold + ' in a row' : pct(c.failureRatio) + ' of ' + c.throughput + ' (opens at ' + pct(c.threshold) + ')';
      var ratio = c.kind === 'consecutive' ? Math.min(1, c.failures / Math.max(1, c.threshold)) : c.failureRatio;
      var bar = el('div', { class: 'bar', role: 'img', 'aria-label': 'failure ratio ' + pct(c.failureRatio) }, [el('span')]);
      bar.firstChild.style.width = Math.round(ratio * 100) + '%';
      var rows = [
        ['failures', threshold],
        ['calls/s', s ? String(s.callRate) : '–'],
        ['rejections', s ? String(s.rejections) : '–'],
        ['latency', s && s.latency ? ms(s.latency.p50) + ' · ' + ms(s.latency.p90) + ' · ' + ms(s.latency.p99) : '–'],
      ];
      if (c.retryAfter !== undefined && c.retryAfter !== null) rows.push(['retry after', ms(c.retryAfter)]);
      var dl = el('dl');
      rows.forEach(function (r) { dl.appendChild(el('dt', { text: r[0] })); dl.appendChild(el('dd', { text: r[1] })); });
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
      root.appendChild(el('article', { class: 'card', 'data-circuit': c.pipelineName, 'data-instance': c.instanceKey || '', 'data-state': c.state }, [
        el('h3', { text: label(c) + (c.strategyName ? ' / ' + c.strategyName : '') }),
        el('span', { class: 'badge', 'data-state': c.state, text: c.state }),
        el('span', { class: 'muted', text: ' ' + c.kind }),
        dl, bar, actions,
      ]));
    });
  }

  function renderTable(id, rows) {
    var body = document.querySelector('#' + id + ' tbody');
    body.textContent = '';
    rows.forEach(function (cells) { body.appendChild(el('tr', null, cells.map(function (v) { return el('td', { text: String(v) }); }))); });
  }

  function render() {
    renderCircuits();
    renderTable('stats', state.stats.map(function (s) {
      var l = s.latency || {};
      return [s.instanceName ? s.pipelineName + ' [' + s.instanceName + ']' : s.pipelineName, s.callRate, s.failures, s.rejections, ms(l.p50), ms(l.p90), ms(l.p99)];
    }));
    renderTable('limiters', state.limiters.map(function (l) {
      return [l.instanceKey ? l.pipelineName + ' [' + l.instanceKey + ']' : l.pipelineName, l.kind, l.permitsInUse === undefined ? '–' : l.permitsInUse, l.permitLimit === undefined ? '–' : l.permitLimit, l.queueLength];
    }));
    document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
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
    // The groups' states are read here too, so a click (which refreshes) reads its group's state once.
    return Promise.all([loadStates(), Promise.all([api('circuits'), api('stats'), api('limiters')]).then(function (r) {
      state.circuits = r[0]; state.stats = r[1]; state.limiters = r[2];
      render();
    }, function (e) { console.warn('resilience dashboard: ' + e.message); })]);
  }
  function refreshSoon() {
    if (refreshTimer) return;
    refreshTimer = setTimeout(function () { refreshTimer = null; refresh(); }, 50);
  }

  function addEvent(e) {
    var list = document.getElementById('events');
    var where = [e.pipelineName, e.instanceName, e.strategyName || e.strategyType].filter(Boolean).join(' / ');
    var details = [e.details, e.outcome].filter(Boolean).join(', ');
    list.insertBefore(el('li', { 'data-event': e.eventName }, [
      el('time', { text: new Date(e.time).toLocaleTimeString() }),
      el('strong', { class: 'sev-' + e.severity, text: e.eventName }),
      el('span', { text: where }),
      el('span', { class: 'muted', text: details }),
    ]), list.firstChild);
    while (list.children.length > 50) list.removeChild(list.lastChild);
    if (e.changesState) refreshSoon();
  }

  function connect() {
    var conn = document.getElementById('connection');
    if (signedOut) return;
    source = new EventSource(base + 'events', { withCredentials: true });
    source.addEventListener('ready', function () { conn.dataset.connected = 'true'; conn.textContent = 'live'; refresh(); });
    source.addEventListener('resilience', function (m) { addEvent(JSON.parse(m.data)); });
    source.onerror = function () {
      if (signedOut) return;
      conn.dataset.connected = 'false';
      if (source.readyState !== EventSource.CLOSED) { conn.textContent = 'reconnecting…'; return; }
      // Refused (the browser does not retry then): ask the API why; a refusal means the session ended.
      conn.textContent = 'disconnected';
      source.close();
      api('').then(function () { setTimeout(connect, 2000); }, function () { if (!signedOut) setTimeout(connect, 2000); });
    };
  }

  bindActions();
  api('').then(function (info) { state.control = !!info.control; })
    .then(function () { return api('events/recent'); })
    .then(function (events) { events.forEach(addEvent); }, function (e) { console.warn('resilience dashboard: ' + e.message); })
    .then(function () { refresh(); connect(); if (!signedOut) poll = setInterval(refresh, 2000); });
})();
`;
